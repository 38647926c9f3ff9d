// libFuzzer target: a session whose every field comes from the input, read back and written as an
// HTML report and a comparison. The input is a sequence of values, each one byte of length (0-254;
// 255 takes the next two bytes) then the bytes, assigned in turn to the rows below and inserted
// with SQLite into a valid schema (so the fuzzer works past "not a database"); the integer and
// real columns (start_ms, byte lists included) get the values as text when they do not parse, which the store must refuse with an
// error. Reading must succeed or throw fusebox::Error; the HTML must keep to the report's markup
// rules (markupProblem: no script, no handler, no link, no URL scheme in a tag, every '&' an
// entity) and must not contain verbatim any fuzz value that holds a '<' and a control byte or 0xFF
// (htmlEscape replaces those, and the report never writes them itself, so finding one verbatim
// means session text went out unescaped, without false alarms on values like "<td>"); else the
// target traps.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <vector>

#include <sqlite3.h>

#include "core/ir/error.h"
#include "fuzz/fuzz_limits.h"
#include "report/graph_layout.h"
#include "report/html_report.h"
#include "report/markup_check.h"
#include "sessions/session_store.h"

namespace {

struct Values {
  const uint8_t* p;
  size_t n, i = 0;
  std::vector<std::string> markup;  // values that must never appear verbatim (see above)
  std::string next() {
    if (i >= n) return "x";
    size_t len = p[i++];
    if (len == 255 && i + 2 <= n) len = size_t{p[i]} << 8 | p[i + 1], i += 2;
    len = std::min(len, n - i);
    std::string v(reinterpret_cast<const char*>(p + i), len);
    i += len;
    static const std::string marks("\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x1b\x1f\x7f\xff", 17);
    if (v.find('<') != std::string::npos && v.find_first_of(marks) != std::string::npos) markup.push_back(v);
    return v;
  }
};

void bindValue(sqlite3_stmt* st, int col, const std::string& v, char kind) {
  if (kind == 'i') {
    char* end = nullptr;
    long long x = std::strtoll(v.c_str(), &end, 10);
    if (!v.empty() && end && !*end) return void(sqlite3_bind_int64(st, col, x));
  } else if (kind == 'r') {
    char* end = nullptr;
    double x = std::strtod(v.c_str(), &end);
    if (!v.empty() && end && !*end) return void(sqlite3_bind_double(st, col, x));
  }
  sqlite3_bind_text(st, col, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}

void insert(sqlite3* db, const char* sql, const char* kinds, Values& in) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) __builtin_trap();
  for (int c = 0; kinds[c]; ++c) bindValue(st, c + 1, in.next(), kinds[c]);
  sqlite3_step(st);  // constraint failures (a duplicate key) just skip the row
  sqlite3_finalize(st);
}

}  // namespace

// Graphviz keeps process-wide state (its context, font caches) from the first layout on; made here
// so that it is not reported as a leak of the first input.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fusebox::fuzz::limitMemory();
  fusebox::renderSvg("digraph g { a [label=\"x\", tooltip=\"y\"]; subgraph cluster_k { label=\"k\"; b; } a -> b; }");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/fusebox_fuzz_session_" + std::to_string(::getpid()) + ".fbs";
  for (const char* s : {"", "-wal", "-shm", "-journal"}) std::remove((path + s).c_str());
  {
    fusebox::SessionStore::open(path).createSession("seed", "seed", "cpu");  // the schema, as Fusebox writes it
  }
  Values in{data, size};
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) __builtin_trap();
  sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
  insert(db, "UPDATE session SET model = ?, config = ?, target = ?, created = ? WHERE id = 1", "tttt", in);
  for (int round = 0; in.i < in.n && round < 4; ++round) {
    insert(db, "INSERT INTO artifact VALUES (1, ?, ?, ?, ?, ?)", "tttsr", in);
    insert(db, "INSERT INTO decision VALUES (1, ?, ?, ?, ?, ?, ?, ?)", "tiitiit", in);
    insert(db, "INSERT INTO kernel VALUES (1, ?, ?, ?, ?, ?, ?)", "titssi", in);
    insert(db, "INSERT INTO source VALUES (1, ?, ?, ?)", "ttt", in);
    insert(db, "INSERT INTO compile_log VALUES (1, ?, ?, ?, ?, ?)", "ttitr", in);
    insert(db, "INSERT INTO profile_sample(session_id, run, graph, kernel, iteration, ms, bytes, start_ms, launch_ms) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)",
           "ittirirr", in);
    insert(db, "INSERT INTO kernel_op(session_id, graph, kernel_id, node, op, recomputed) VALUES (1, ?, ?, ?, ?, ?)", "tiiti", in);
    insert(db, "INSERT INTO schedule_summary(session_id, graph, program, peak_bytes, live_bytes, allocated_bytes) VALUES (1, ?, ?, ?, ?, ?)", "ttiss", in);
  }
  sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  try {
    fusebox::SessionStore store = fusebox::SessionStore::openReadOnly(path);
    fusebox::ReportOptions options;
    options.maxDrawnNodes = 200;  // keep each input fast; the limits themselves are unit-tested
    for (const std::string& html : {fusebox::htmlReport(store, 1, options), fusebox::htmlComparisonReport(store, 1, store, 1, options)}) {
      std::string problem = fusebox::markupProblem(html);
      if (!problem.empty()) {
        std::fprintf(stderr, "unsafe report: %s\n", problem.c_str());
        __builtin_trap();
      }
      for (const std::string& v : in.markup)
        if (html.find(v) != std::string::npos) {
          std::fprintf(stderr, "session text not escaped: %s\n", v.c_str());
          __builtin_trap();
        }
    }
  } catch (const fusebox::Error&) {
  }
  return 0;
}

#include "sessions/session_db.h"

#include <chrono>
#include <cmath>
#include <thread>
#include <cstring>

#include "sessions/session_fields.h"

namespace fusebox {

SessionStore::Db::~Db() {
  if (!handle) return;
  if (!readOnly && owned) {
    // The last writer to close leaves the file in rollback-journal mode: at rest it then needs no
    // -wal/-shm companions, and a read-only reader takes ordinary file locks (see session_open.cpp).
    // With other connections still open this fails (no busy wait) and the file stays in WAL; a few
    // short retries let writers that close at the same instant not all give up.
    sqlite3_busy_timeout(handle, 0);
    for (int attempt = 0; attempt < 8; ++attempt) {
      if (sqlite3_exec(handle, "PRAGMA journal_mode = DELETE", nullptr, nullptr, nullptr) == SQLITE_OK) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5 + (reinterpret_cast<uintptr_t>(this) >> 4) % 20));
    }
  }
  sqlite3_close_v2(handle);
}

void SessionStore::Db::fail(const std::string& what) const {
  throw SessionError(path + ": " + what + ": " + (handle ? sqlite3_errmsg(handle) : "cannot open"));
}

void SessionStore::Db::exec(const char* sql, const std::string& what) {
  char* err = nullptr;
  if (sqlite3_exec(handle, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw SessionError(path + ": " + what + ": " + msg);
  }
}

int SessionStore::Db::tryExec(const char* sql) { return sqlite3_exec(handle, sql, nullptr, nullptr, nullptr); }

Statement::Statement(SessionStore::Db& db, const char* table, const char* sql) : db_(db), table_(table) {
  if (sqlite3_prepare_v2(db.handle, sql, -1, &st_, nullptr) != SQLITE_OK) db.fail(std::string("cannot query the ") + table + " table");
}

Statement::~Statement() { sqlite3_finalize(st_); }

bool Statement::step() {
  int rc = sqlite3_step(st_);
  if (rc == SQLITE_ROW) {
    const char* first = sqlite3_column_name(st_, 0);
    row_ = first && std::strcmp(first, "rowid") == 0 ? sqlite3_column_int64(st_, 0) : row_ + 1;
    return true;
  }
  if (rc == SQLITE_DONE) return false;
  db_.fail(std::string("reading or writing the ") + table_ + " table failed");
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::bad(const char* column, const std::string& what) const {
  throw SessionError(db_.path + ": table " + table_ + ", row " + std::to_string(row_) + ", column " + column + ": " + what);
}

int64_t Statement::i64(int c, const char* column, int64_t lo, int64_t hi) const {
  int type = sqlite3_column_type(st_, c);
  if (type != SQLITE_INTEGER) {
    if (type == SQLITE_NULL) bad(column, "missing (NULL) where a whole number is expected");
    const unsigned char* t = sqlite3_column_text(st_, c);
    bad(column, excerpt(t ? reinterpret_cast<const char*>(t) : "") + " is not a whole number");
  }
  int64_t v = sqlite3_column_int64(st_, c);
  if (v < lo || v > hi) bad(column, std::to_string(v) + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

double Statement::msOrMissing(int c, const char* column) const { return sqlite3_column_type(st_, c) == SQLITE_NULL ? -1 : ms(c, column); }

double Statement::ms(int c, const char* column) const {
  int type = sqlite3_column_type(st_, c);
  if (type != SQLITE_FLOAT && type != SQLITE_INTEGER) {
    if (type == SQLITE_NULL) bad(column, "missing (NULL) where a time is expected");
    const unsigned char* t = sqlite3_column_text(st_, c);
    bad(column, excerpt(t ? reinterpret_cast<const char*>(t) : "") + " is not a number");
  }
  double v = sqlite3_column_double(st_, c);
  if (!std::isfinite(v) || v < 0 || v > 1e12) bad(column, "time " + std::to_string(v) + " ms is not a finite non-negative number");
  return v;
}

std::string Statement::text(int c, const char* column, int64_t maxBytes) const {
  int type = sqlite3_column_type(st_, c);
  if (type != SQLITE_TEXT) bad(column, type == SQLITE_NULL ? "missing (NULL) where text is expected" : "not text");
  const unsigned char* t = sqlite3_column_text(st_, c);
  if (!t) db_.fail("out of memory reading the " + std::string(table_) + " table");
  std::string s(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(st_, c)));
  if (std::string problem = textProblem(s, maxBytes); !problem.empty()) bad(column, problem);
  return s;
}

template <class T>
std::vector<T> Statement::ids(int c, const char* column) const {
  std::string s = text(c, column, kMaxBodyBytes);
  std::optional<std::vector<int64_t>> v = parseIdList(s, kMaxNodeId);
  if (!v) bad(column, excerpt(s) + " is not a comma-separated list of node ids");
  return std::vector<T>(v->begin(), v->end());
}
std::vector<int64_t> Statement::byteCounts(int c, const char* column) const {
  std::string s = text(c, column, kMaxBodyBytes);
  std::optional<std::vector<int64_t>> v = parseIdList(s, int64_t{1} << 60);
  if (!v) bad(column, excerpt(s) + " is not a comma-separated list of byte counts");
  return *v;
}
template std::vector<int> Statement::ids<int>(int, const char*) const;
template std::vector<int64_t> Statement::ids<int64_t>(int, const char*) const;

Transaction::Transaction(SessionStore::Db& db) : db_(db) {
  if (db.readOnly) throw SessionError(db.path + ": the session file is open read-only");
  db_.exec("BEGIN IMMEDIATE", "cannot start a transaction");
}

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_.handle, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  db_.exec("COMMIT", "cannot commit");
  done_ = true;
}

}  // namespace fusebox

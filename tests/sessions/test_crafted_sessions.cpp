// Session files from elsewhere: each threat built in the test as a crafted file (with SQLite
// directly, as an attacker would) and checked against its guarantee: reports escape everything,
// huge graphs are bounded, bad fields are clear errors naming the file, non-session files are
// refused untouched, read-only files are reported without leaving files, concurrent creators all
// get recorded.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <sqlite3.h>

#include "report/graph_layout.h"
#include "report/html_escape.h"
#include "report/html_report.h"
#include "report/markup_check.h"
#include "sessions/session_fields.h"
#include "sessions/session_file.h"
#include "sessions/session_store.h"
#include "test_util.h"

using namespace fusebox;
namespace fs = std::filesystem;

namespace {

// A scratch folder, removed (made writable first) at the end.
struct TempDir {
  fs::path dir;
  explicit TempDir(const std::string& name) {
    dir = fs::temp_directory_path() / ("fusebox_crafted_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(dir, fs::perms::owner_all, ec);
    fs::remove_all(dir, ec);
  }
  std::string file(const std::string& name) const { return (dir / name).string(); }
  std::set<std::string> listing() const {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
    return names;
  }
};

void sql(const std::string& path, const std::string& text) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  int rc = sqlite3_exec(db, text.c_str(), nullptr, nullptr, &err);
  std::string msg = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << msg;
}

std::string readAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

const char* kEvil = "<script>alert(1)</script><img src=x onerror=alert(2)><a href=\"javascript:alert(3)\">x</a>";

// A valid session whose every text field is hostile: names, DOT (with URL/href/image attributes
// and an HTML-like label), code, logs, reasons.
int64_t writeHostileSession(const std::string& path) {
  SessionStore s = SessionStore::open(path);
  int64_t id = s.createSession(std::string("model") + kEvil, std::string("cfg") + kEvil, "cpu");
  StageRecord r;
  std::string dot = std::string("digraph \"g") + "\" {\n"
                    "  stylesheet=\"javascript:alert(4)\"; URL=\"javascript:alert(5)\";\n"
                    "  n1 [label=\"<script>alert(6)</script>\", URL=\"javascript:alert(7)\", href=\"data:text/html,x\", target=\"_top\",\n"
                    "      tooltip=\"</title><script>alert(8)</script>\", image=\"/etc/passwd\", fillcolor=\"red;onload=x\"];\n"
                    "  n2 [label=<<b>html</b><img src=\"/etc/passwd\"/>>, shape=record, id=\"x\\\" onload=\\\"alert(9)\"];\n"
                    "  subgraph \"cluster_</text><script>\" { label=\"</text><script>alert(10)</script>\"; color=\"javascript:x\"; n1; }\n"
                    "  n1 -> n2 [URL=\"javascript:alert(11)\", label=\"<script>\"];\n"
                    "}\n";
  r.artifacts = {{"trace", std::string("traced") + kEvil, "dot", dot, 1},
                 {"partition", "report", "text", std::string("partition ") + kEvil, 1},
                 {std::string("stage") + kEvil, "g", "json", "{}", 1}};
  r.decisions = {{std::string("forward") + kEvil, 1, 2, std::string("vertical") + kEvil, true, std::string("fused: ") + kEvil, 10}};
  r.kernels = {{std::string("forward") + kEvil, 0, std::string("kernel") + kEvil, {1, 2}, {3}, 100}};
  r.sources = {{"forward", std::string("cpp") + kEvil, std::string("int main() { return 0; } // ") + kEvil}};
  s.writeStage(id, r);
  s.writeCompileLog(id, {"forward", std::string("cpu") + kEvil, false, std::string("error: ") + kEvil, 1});
  int run = s.beginRun(id);
  s.appendProfile(id, {{run, "forward", std::string("kernel") + kEvil, 0, 0.5, 100}, {run, "forward", std::string("kernel") + kEvil, 1, 0.25, 100}});
  return id;
}

void expectSafe(const std::string& html) {
  EXPECT_EQ(markupProblem(html), "");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("href=\"javascript"), std::string::npos);
  EXPECT_EQ(html.find("xlink:href"), std::string::npos) << "no links from stored DOT";
  EXPECT_EQ(html.find("<image"), std::string::npos) << "no image references from stored DOT";
  EXPECT_EQ(html.find("<img src=x onerror"), std::string::npos);
}

}  // namespace

// ---- 1. escaping ------------------------------------------------------------------------------

TEST(HtmlEscape, EscapesMarkupQuotesControlsAndBadUtf8) {
  EXPECT_EQ(htmlEscape("<a href='x'>&\"</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
  EXPECT_EQ(htmlEscape(std::string("a\0b\x01", 4)), "a\xEF\xBF\xBD" "b\xEF\xBF\xBD");
  EXPECT_EQ(htmlEscape("\xC3\xA9 \xFF tab\t"), "\xC3\xA9 \xEF\xBF\xBD tab\t");
  EXPECT_EQ(markupProblem(htmlEscape(kEvil)), "");
}

TEST(MarkupCheck, RefusesScriptsHandlersLinksAndSchemes) {
  EXPECT_EQ(markupProblem("<p class=meta>ok &amp; fine</p><svg width='1'><text x='0'>t</text></svg>"), "");
  EXPECT_NE(markupProblem("<script>x</script>"), "");
  EXPECT_NE(markupProblem("<p onclick='x'>"), "");
  EXPECT_NE(markupProblem("<a href='https://example.com'>x</a>"), "") << "no links at all, only #anchors";
  EXPECT_EQ(markupProblem("<a href='#stage'>x</a>"), "");
  EXPECT_NE(markupProblem("<a xlink:title='jav&#x61;script:alert(1)'>x</a>"), "");
  EXPECT_NE(markupProblem("a < b"), "");
  EXPECT_NE(markupProblem("a & b"), "");
}

TEST(CraftedSession, ReportEscapesEverythingFromTheSession) {
  TempDir d("hostile");
  std::string path = d.file("hostile.fbs");
  int64_t id = writeHostileSession(path);
  SessionStore s = SessionStore::openReadOnly(path);
  std::string html = htmlReport(s, id);
  expectSafe(html);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos) << "shown as text";
  EXPECT_NE(html.find("<div class=graph><svg"), std::string::npos) << "the graph is still drawn";
  EXPECT_NE(html.find("&lt;script&gt;alert(6)&lt;/script&gt;"), std::string::npos) << "a DOT label is text in the SVG";
  std::string cmp = htmlComparisonReport(s, id, s, id);
  expectSafe(cmp);
}

TEST(CraftedSession, DotIsRebuiltWithoutLinksImagesOrHtmlLabels) {
  std::string safe = sanitizeDot(R"(digraph g { n1 [label=<<img src="/etc/passwd"/>>, URL="javascript:x", image="/etc/passwd", shape=record];
                                        n1 -> n2 [href="javascript:y"]; })");
  EXPECT_EQ(safe.find("URL"), std::string::npos);
  EXPECT_EQ(safe.find("href"), std::string::npos);
  EXPECT_EQ(safe.find("image"), std::string::npos);
  EXPECT_EQ(safe.find("record"), std::string::npos);
  EXPECT_NE(safe.find("label=\"<img src=\\\"/etc/passwd\\\"/>\""), std::string::npos) << "an HTML label becomes plain text:\n" << safe;
  std::string svg = renderSvg(R"(digraph g { n1 [label=<x\>, tooltip=<y\>]; n1 -> n2; })");  // values ending in a backslash
  EXPECT_EQ(markupProblem(svg.substr(svg.find("<svg"))), "");
}

// ---- 2. bounded layout ------------------------------------------------------------------------

TEST(CraftedSession, HugeOrPathologicalDotIsRefusedBeforeLayout) {
  auto quick = [](const std::string& dot, const std::string& needle) {
    auto t0 = std::chrono::steady_clock::now();
    test::expectThrowContaining<GraphTooLarge>([&] { layoutDot(dot); }, needle);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  };
  std::string many = "digraph g {\n";
  for (int i = 0; i < 6000; ++i) many += "n" + std::to_string(i) + ";\n";
  quick(many + "}", "too large to lay out: 6000 nodes > limit 5000");
  quick("digraph g {" + std::string(9 << 20, ' ') + "}", "bytes of dot > limit");
  // one statement, a million edges while parsing: refused before Graphviz parses it
  std::string side = "{";
  for (int i = 0; i < 1000; ++i) side += " a" + std::to_string(i);
  test::expectThrowContaining<LayoutError>([&] { layoutDot("digraph g { " + side + "} -> " + side + "} }"); }, "edge from a subgraph");
  test::expectThrowContaining<LayoutError>([&] { layoutDot("digraph g { x -> " + side + "} }"); }, "edge to a subgraph");
  // a chain with fan-out edges from its head: few nodes, minutes of layout
  std::string fan = "digraph g {\n";
  for (int i = 1; i < 1500; ++i) fan += "n" + std::to_string(i - 1) + " -> n" + std::to_string(i) + ";\n";
  for (int i = 2; i < 1500; i += 3) fan += "n0 -> n" + std::to_string(i) + ";\n";
  quick(fan + "}", "too complex to lay out");
  std::string nested = "digraph g {" + std::string(200, '{') + std::string(200, '}') + "}";
  test::expectThrowContaining<LayoutError>([&] { layoutDot(nested); }, "nested more than 64 deep");
}

TEST(CraftedSession, ReportListsAGraphTooLargeToDraw) {
  TempDir d("large");
  std::string path = d.file("large.fbs");
  {
    SessionStore s = SessionStore::open(path);
    int64_t id = s.createSession("m", "c", "cpu");
    std::string dot = "digraph g {\n";
    for (int i = 0; i < 1600; ++i) dot += "n" + std::to_string(i) + " [shape=box];\n";  // no "[label=": the old count saw 0
    StageRecord r;
    r.artifacts = {{"joint", "joint", "dot", dot + "}", 1}};
    s.writeStage(id, r);
  }
  SessionStore s = SessionStore::openReadOnly(path);
  std::string html = htmlReport(s, 1);
  EXPECT_NE(html.find("1600 nodes: too large to draw in a report (limit 1500)"), std::string::npos);
}

// ---- 4. read-only access ---------------------------------------------------------------------

TEST(CraftedSession, EmptyAndForeignFilesAreRefusedAndLeftUnchanged) {
  TempDir d("refuse");
  std::string empty = d.file("empty.fbs");
  std::ofstream(empty).close();
  test::expectThrowContaining<SessionError>([&] { SessionStore::openReadOnly(empty); }, empty + ": not a Fusebox session file (the file is empty)");
  EXPECT_EQ(fs::file_size(empty), 0u);
  std::string foreign = d.file("foreign.db");
  sql(foreign, "CREATE TABLE invoices(id INTEGER PRIMARY KEY); PRAGMA journal_mode=WAL; INSERT INTO invoices VALUES (1)");
  std::string before = readAll(foreign);
  auto files = d.listing();
  test::expectThrowContaining<SessionError>([&] { SessionStore::openReadOnly(foreign); }, "a SQLite database of another program");
  test::expectThrowContaining<SessionError>([&] { SessionStore::open(foreign, false); }, "a SQLite database of another program");
  EXPECT_EQ(readAll(foreign), before) << "not even switched to another journal mode";
  EXPECT_EQ(d.listing(), files);
  std::string text = d.file("notes.txt");
  std::ofstream(text) << std::string(300, 'x');
  test::expectThrowContaining<SessionError>([&] { SessionStore::openReadOnly(text); }, "file is not a database");
  EXPECT_EQ(readAll(text), std::string(300, 'x'));
}

// The reader runs in a child process; as root it first drops to "nobody" so that permissions
// apply (root would write a read-only file anyway).
void reportInChild(const std::string& path, const std::string& out) {
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(3);
    try {
      SessionStore s = SessionStore::openReadOnly(path);
      std::string html = htmlReport(s, *s.latestSession());
      ::_exit(html.find("<h1>Fusebox report: mlp</h1>") != std::string::npos ? 0 : 4);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
      ::_exit(5);
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << out;
}

TEST(CraftedSession, ReadOnlyFileAndFolderAreReportedWithoutNewFiles) {
  TempDir d("readonly");
  std::string path = d.file("s.fbs");
  {
    SessionStore s = SessionStore::open(path);
    s.createSession("mlp", "infer", "cpu");
  }
  fs::permissions(d.dir, fs::perms::all);  // "nobody" may enter
  ::chmod(path.c_str(), 0444);
  auto files = d.listing();
  std::string bytes = readAll(path);
  reportInChild(path, "read-only file");
  EXPECT_EQ(d.listing(), files) << "no -wal/-shm left behind";
  ::chmod(d.dir.c_str(), 0555);
  reportInChild(path, "read-only folder");
  EXPECT_EQ(d.listing(), files);
  EXPECT_EQ(readAll(path), bytes);
  ::chmod(d.dir.c_str(), 0755);

  // a file left in WAL mode (a writer that could not switch back) is read as immutable
  std::string wal = d.file("wal.fbs");
  {
    SessionStore s = SessionStore::open(wal);
    s.createSession("mlp", "infer", "cpu");
  }
  sql(wal, "PRAGMA journal_mode=WAL");
  fs::permissions(wal, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  files = d.listing();
  ASSERT_FALSE(files.count("wal.fbs-wal"));
  reportInChild(wal, "WAL file at rest");
  EXPECT_EQ(d.listing(), files);
}

TEST(CraftedSession, ReadOnlyStoreRefusesWritesAndFollowsALiveWriter) {
  TempDir d("live");
  std::string path = d.file("s.fbs");
  SessionStore writer = SessionStore::open(path);
  int64_t id = writer.createSession("mlp", "infer", "cpu");
  SessionStore reader = SessionStore::openReadOnly(path, true);
  EXPECT_TRUE(reader.readOnly());
  test::expectThrowContaining<SessionError>([&] { reader.createSession("x", "y", "cpu"); }, "open read-only");
  writer.appendProfile(id, {{1, "forward", "k", 0, 0.5, 1}});
  EXPECT_EQ(reader.profile(id).size(), 1u) << "a live reader sees what the writer commits";
}

// ---- 5. field validation ---------------------------------------------------------------------

TEST(SessionFields, IdListsAreStrict) {
  EXPECT_EQ(parseIdList("3,4,17", 100).value(), (std::vector<int64_t>{3, 4, 17}));
  EXPECT_TRUE(parseIdList("", 100).value().empty());
  for (const char* bad : {"a,b", "1,,2", "1,", "-1", " 1", "101", "99999999999999999999999"}) EXPECT_FALSE(parseIdList(bad, 100)) << bad;
}

TEST(CraftedSession, BadFieldsAreClearErrorsNamingTheFile) {
  TempDir d("fields");
  struct Case {
    const char* name;
    const char* sql;
    const char* needle;
    int what;  // 0 kernels, 1 decisions, 2 profile, 3 artifacts, 4 session, 5 compile logs
  };
  const Case cases[] = {
      {"stoll", "UPDATE kernel SET nodes = 'a,b'", "table kernel, row 1, column nodes: 'a,b' is not a comma-separated list of node ids", 0},
      {"overflow", "UPDATE kernel SET provenance = '99999999999999999999999'", "column provenance", 0},
      {"negative", "UPDATE kernel SET bytes = -5", "column bytes: -5 is out of range", 0},
      {"text_int", "UPDATE decision SET first = 'x'", "column first: 'x' is not a whole number", 1},
      {"huge_int", "UPDATE decision SET second = 1099511627776", "column second: 1099511627776 is out of range", 1},
      {"bool", "UPDATE decision SET fused = 7", "column fused: 7 is out of range [0, 1]", 1},
      {"null", "UPDATE profile_sample SET ms = 'fast'", "column ms: 'fast' is not a number", 2},
      {"inf", "UPDATE profile_sample SET ms = 1e999", "column ms: time inf ms", 2},
      {"run", "UPDATE profile_sample SET run = -1", "column run: -1 is out of range", 2},
      {"nul", "UPDATE artifact SET graph = 'a' || char(0) || 'b'", "column graph: a NUL byte", 3},
      {"blob", "UPDATE artifact SET body = x'00ff'", "column body: not text", 3},
      {"long_name", "UPDATE session SET model = printf('%.5000c', 'x')", "column model: 5000 bytes, more than the 4096 allowed", 4},
      {"log", "UPDATE compile_log SET ok = 'yes'", "column ok: 'yes' is not a whole number", 5},
  };
  for (const Case& c : cases) {
    std::string path = d.file(std::string(c.name) + ".fbs");
    {
      SessionStore s = SessionStore::open(path);
      int64_t id = s.createSession("mlp", "c", "cpu");
      StageRecord r;
      r.artifacts = {{"trace", "traced", "text", "t", 1}};
      r.decisions = {{"forward", 1, 2, "vertical", true, "r", 1}};
      r.kernels = {{"forward", 0, "k0", {1, 2}, {3}, 8}};
      s.writeStage(id, r);
      s.writeCompileLog(id, {"forward", "cpu", true, "ok", 1});
      s.appendProfile(id, {{1, "forward", "k0", 0, 0.5, 8}});
    }
    sql(path, c.sql);
    SessionStore s = SessionStore::openReadOnly(path);
    SCOPED_TRACE(c.name);
    test::expectThrowContaining<SessionError>([&] {
      switch (c.what) {
        case 0: s.kernels(1); break;
        case 1: s.decisions(1); break;
        case 2: s.profile(1); break;
        case 3: s.artifacts(1); break;
        case 4: s.sessions(); break;
        default: s.compileLogs(1);
      }
    }, c.needle);
    test::expectThrowContaining<SessionError>([&] { htmlReport(s, 1); }, path);
  }
}

// The rows schema 3 added for the views are checked like the others: a bad value is an error
// naming the file, the table, the row and the column.
TEST(CraftedSession, BadViewRowsAreClearErrorsNamingTheFile) {
  TempDir d("view_rows");
  struct Case {
    const char* name;
    const char* sql;
    const char* needle;
    int what;  // 0 graph nodes, 1 kernel spans, 2 kernels (their ops), 3 schedule summaries
  };
  const Case cases[] = {
      {"origins", "UPDATE graph_node SET origins = 'x'", "table graph_node, row 1, column origins: 'x' is not a comma-separated list of node ids", 0},
      {"scope", "UPDATE graph_node SET scope = x'00'", "column scope: not text", 0},
      {"lines", "UPDATE kernel_span SET last_line = 2", "column last_line: 2 is before first_line 3", 1},
      {"line", "UPDATE kernel_span SET first_line = -1", "column first_line: -1 is out of range", 1},
      {"op_kernel", "UPDATE kernel_op SET kernel_id = 7", "table kernel_op, row 1, column kernel_id: names no kernel of the session", 2},
      {"op_node", "UPDATE kernel_op SET node = 'a'", "column node: 'a' is not a whole number", 2},
      {"peak", "UPDATE schedule_summary SET peak_bytes = -1", "column peak_bytes: -1 is out of range", 3},
  };
  for (const Case& c : cases) {
    std::string path = d.file(std::string(c.name) + ".fbs");
    {
      SessionStore s = SessionStore::open(path);
      int64_t id = s.createSession("mlp", "c", "cpu");
      StageRecord r;
      r.nodes = {{"trace", "traced", "n0", {0}, "fc"}};
      r.kernels = {{"forward", 0, "k0", {1, 2}, {3}, 8, {{1, "prims.add"}}}};
      r.spans = {{"forward", "cpp", 0, "k0", 3, 5, {3}}};
      r.schedules = {{"forward", "mlp.forward.prims", 64}};
      s.writeStage(id, r);
    }
    sql(path, c.sql);
    SessionStore s = SessionStore::openReadOnly(path);
    SCOPED_TRACE(c.name);
    test::expectThrowContaining<SessionError>([&] {
      switch (c.what) {
        case 0: s.nodes(1, "trace"); break;
        case 1: s.kernelSpans(1); break;
        case 2: s.kernels(1); break;
        default: s.schedules(1);
      }
    }, c.needle);
  }
}

TEST(CraftedSession, AlteredSchemaIsRefused) {
  TempDir d("schema");
  const char* alterations[] = {
      "DROP TABLE artifact; CREATE VIEW artifact AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
      "SELECT 1 AS session_id, 's' AS stage, 'g' AS graph, 'f' AS format, 'b' AS body, 0.0 AS ms FROM c",
      "CREATE TRIGGER t AFTER INSERT ON session BEGIN DELETE FROM session; END",
      "ALTER TABLE kernel ADD COLUMN extra TEXT",
  };
  int i = 0;
  for (const char* alter : alterations) {
    std::string path = d.file("altered" + std::to_string(i++) + ".fbs");
    { SessionStore::open(path).createSession("mlp", "c", "cpu"); }
    sql(path, alter);
    test::expectThrowContaining<SessionError>([&] { SessionStore::openReadOnly(path); }, path + ": not a session file as Fusebox writes it");
    test::expectThrowContaining<SessionError>([&] { SessionStore::open(path); }, "not a session file as Fusebox writes it");
  }
}

// ---- 3. concurrent creators ------------------------------------------------------------------

TEST(SessionStore, ConcurrentCreatorsOfANewFileAreAllRecorded) {
  TempDir d("concurrent");
  std::string path = d.file("new.fbs");
  const int kProcesses = 6, kThreads = 4;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      try {
        SessionStore s = SessionStore::open(path);
        int64_t id = s.createSession("mlp", "process " + std::to_string(p), "cpu");
        StageRecord r;
        r.artifacts = {{"trace", "traced", "text", "graph", 1}};
        s.writeStage(id, r);
        ::_exit(0);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "process %d: %s\n", p, e.what());
        ::_exit(1);
      }
    }
    children.push_back(pid);
  }
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        SessionStore s = SessionStore::open(path);
        s.createSession("mlp", "thread " + std::to_string(t), "cpu");
      } catch (const std::exception& e) {
        std::fprintf(stderr, "thread %d: %s\n", t, e.what());
        ++failures;
      }
    });
  for (std::thread& t : threads) t.join();
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(failures, 0);
  // Writers closing at the same instant may each see the other still open and leave the file in
  // WAL mode with its -wal/-shm: readers handle that too (session_open.cpp).
  SessionStore s = SessionStore::openReadOnly(path);
  EXPECT_EQ(s.sessions().size(), static_cast<size_t>(kProcesses + kThreads));
}

// Whether a forked process finds a POSIX lock held on `path` (by this process).
bool anotherProcessSeesALock(const std::string& path) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int fd = ::open(path.c_str(), O_RDWR);
    struct flock l {};
    l.l_type = F_WRLCK;
    l.l_whence = SEEK_SET;
    bool locked = fd >= 0 && ::fcntl(fd, F_GETLK, &l) == 0 && l.l_type != F_UNLCK;
    ::_exit(locked ? 0 : 1);
  }
  int status = 0;
  return ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// The GUI's connections: its own writer and live reader stay open while a `fusebox run` child
// writes the same file and closes; the GUI's next compile opens a new writer (then drops the old)
// and must still commit.
TEST(SessionStore, WriterCommitsAfterAnotherProcessWriterClosed) {
  TempDir d("gui_like");
  std::string path = d.file("s.fbs");
  auto worker = std::make_unique<SessionStore>(SessionStore::open(path));
  int64_t id = worker->createSession("mlp", "infer", "cpu");
  SessionStore reader = SessionStore::openReadOnly(path, true);
  EXPECT_EQ(reader.sessions().size(), 1u);
  // Reading the header must leave this process's POSIX locks alone (closing a descriptor of the
  // file drops them all); another process sees them.
  EXPECT_TRUE(inspectSessionFile(path).sqlite);
  EXPECT_TRUE(anotherProcessSeesALock(path));
  pid_t pid = ::fork();
  if (pid == 0) {
    try {
      SessionStore child = SessionStore::open(path);
      child.beginRun(id);
      child.appendProfile(id, {{1, "forward", "k", 0, 0.5, 1}});
    } catch (...) {
      ::_exit(1);
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(reader.profile(id).size(), 1u);
  EXPECT_TRUE(inspectSessionFile(path).wal) << "this process's connections are open: the closing child may not switch the journal mode";
  worker = std::make_unique<SessionStore>(SessionStore::open(path));
  int64_t next = worker->createSession("mlp", "infer", "cpu");
  StageRecord r;
  r.artifacts = {{"trace", "traced", "text", "t", 1}};
  worker->writeStage(next, r);
  EXPECT_EQ(reader.sessions().size(), 2u);
}

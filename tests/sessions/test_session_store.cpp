// The session store: every artifact kind round-trips, a process killed mid-run leaves every
// committed stage readable, and files that are not Fusebox sessions are rejected with an error
// naming the file.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include <sqlite3.h>

#include "core/frontend/model_loader.h"
#include "report/session_summary.h"
#include "sessions/session_recorder.h"
#include "sessions/session_store.h"
#include "test_util.h"

using namespace fusebox;
namespace fs = std::filesystem;

namespace {

// A fresh path in the test's temp dir, removed (with its WAL files) at the end.
struct TempSession {
  std::string path;
  explicit TempSession(const std::string& name) {
    path = (fs::temp_directory_path() / ("fusebox_test_" + name + "_" + std::to_string(::getpid()) + ".fbs")).string();
    clean();
  }
  ~TempSession() { clean(); }
  void clean() {
    for (const char* s : {"", "-wal", "-shm"}) fs::remove(path + s);
  }
};

void rawSql(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

// mlp's training compile, and `p` recorded stage by stage into a new session of `s`.
Pipeline mlpTraining() {
  PipelineConfig c;
  c.train = true;
  return Pipeline(loadModel("mlp"), c);
}
int64_t record(SessionStore& s, Pipeline& p) {
  int64_t id = s.createSession("mlp", describeConfig(p.config()), p.config().target);
  runAndRecord(p, s, id);
  return id;
}

}  // namespace

TEST(SessionStore, EveryArtifactKindRoundTrips) {
  TempSession t("roundtrip");
  int64_t id = 0;
  {
    SessionStore s = SessionStore::open(t.path);
    id = s.createSession("mlp", "train target=cpu", "cpu");
    StageRecord r;
    r.artifacts = {{"trace", "traced", "json", "{\"name\":\"mlp\"}", 1.5}, {"trace", "traced", "text", "graph mlp(...)\n", 1.5}};
    s.writeStage(id, r);
    StageRecord sched;
    sched.artifacts = {{"schedule", "forward", "dot", "digraph x {}", 0.25}};
    sched.decisions = {{"forward", 3, 4, "vertical", true, "fused: 4.0 KB saved", 4096}, {"forward", 4, 9, "horizontal", false, "incompatible", 0}};
    sched.kernels = {{"forward", 0, "kernel0", {3, 4}, {11, 12, 13}, 8192, {}}};
    sched.sources = {{"forward", "cpp", "void k() {}\n"}, {"forward", "cuda", "__global__ void k() {}\n"}};
    s.writeStage(id, sched);
    s.writeSources(id, {{"forward", "ptx", ".version 8.0"}});
    s.writeCompileLog(id, {"forward", "cuda", false, "error: expected ;", 12.5});
    int run = s.beginRun(id);
    EXPECT_EQ(run, 1);
    s.appendProfile(id, {{run, "forward", "kernel0", 0, 0.125, 8192}, {run, "forward", "kernel0", 1, 0.25, 8192, 0.5, 0.375}});
  }
  SessionStore s = SessionStore::open(t.path, false);
  ASSERT_EQ(s.sessions().size(), 1u);
  std::vector<ProfileSample> profile = s.profile(id);
  ASSERT_EQ(profile.size(), 2u);
  EXPECT_EQ(profile[0].startMs, -1);  // not recorded: NULL, read back as unknown
  EXPECT_EQ(profile[0].launchMs, -1);
  EXPECT_DOUBLE_EQ(profile[1].startMs, 0.5);
  EXPECT_DOUBLE_EQ(profile[1].launchMs, 0.375);  // when the host issued it (CUDA)
  SessionInfo info = s.session(id);
  EXPECT_EQ(info.model, "mlp");
  EXPECT_EQ(info.config, "train target=cpu");
  EXPECT_EQ(info.target, "cpu");
  EXPECT_EQ(info.created.size(), 20u) << info.created;  // 2026-12-02T15:45:00Z
  EXPECT_EQ(s.stagesDone(id), (std::vector<std::string>{"trace", "schedule"}));
  auto json = s.artifact(id, "trace", "traced", "json");
  ASSERT_TRUE(json);
  EXPECT_EQ(json->body, "{\"name\":\"mlp\"}");
  EXPECT_DOUBLE_EQ(json->ms, 1.5);
  EXPECT_FALSE(s.artifact(id, "trace", "traced", "dot"));
  auto ds = s.decisions(id);
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(ds[0].first, 3);
  EXPECT_EQ(ds[0].second, 4);
  EXPECT_TRUE(ds[0].fused);
  EXPECT_EQ(ds[0].score, 4096);
  EXPECT_EQ(ds[1].reason, "incompatible");
  EXPECT_FALSE(ds[1].fused);
  auto ks = s.kernels(id);
  ASSERT_EQ(ks.size(), 1u);
  EXPECT_EQ(ks[0].nodes, (std::vector<int>{3, 4}));
  EXPECT_EQ(ks[0].provenance, (std::vector<int64_t>{11, 12, 13}));
  EXPECT_EQ(ks[0].bytes, 8192);
  auto src = s.sources(id);
  ASSERT_EQ(src.size(), 3u);
  EXPECT_EQ(src[2].kind, "ptx");
  auto logs = s.compileLogs(id);
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_FALSE(logs[0].ok);
  EXPECT_EQ(logs[0].log, "error: expected ;");
  int64_t last = 0;
  auto first = s.profile(id, 0, &last);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_DOUBLE_EQ(first[1].ms, 0.25);
  EXPECT_EQ(first[1].iteration, 1);
  EXPECT_TRUE(s.profile(id, last).empty()) << "a poll after the last sample returns nothing new";
  EXPECT_EQ(s.beginRun(id), 2);
}

// A real pipeline recorded stage by stage: each stage's rows are what the pipeline produced.
TEST(SessionRecorder, RecordsEveryStageOfATrainingCompile) {
  TempSession t("recorder");
  SessionStore s = SessionStore::open(t.path);
  Pipeline p = mlpTraining();
  int64_t id = record(s, p);
  EXPECT_EQ(s.stagesDone(id), (std::vector<std::string>{"trace", "joint", "partition", "decompose", "lower", "schedule", "codegen"}));
  auto joint = s.artifact(id, "joint", "joint", "json");
  ASSERT_TRUE(joint);
  EXPECT_NE(joint->body.find("\"nodes\""), std::string::npos);
  size_t decisions = p.schedules()[0].decisions.size() + p.schedules()[1].decisions.size();
  EXPECT_EQ(s.decisions(id).size(), decisions);
  EXPECT_EQ(s.kernels(id).size(), p.schedules()[0].kernels.size() + p.schedules()[1].kernels.size());
  ASSERT_TRUE(s.artifact(id, "schedule", "backward", "dot"));
  EXPECT_NE(s.artifact(id, "schedule", "backward", "dot")->body.find("cluster_kernel"), std::string::npos);
  int cpp = 0, cuda = 0;
  for (const StoredSource& src : s.sources(id)) {
    cpp += src.kind == "cpp";
    cuda += src.kind == "cuda";
  }
  EXPECT_EQ(cpp, 2);
  EXPECT_EQ(cuda, 2);
  EXPECT_EQ(s.session(id).config, "train target=cpu partitioner=mincut fusion=on");
}

// A child process records a compile and then appends profile samples forever; the parent kills
// it (SIGKILL, no clean-up) once it reports the codegen stage committed. Reopened, the file has
// every stage, and whole profile batches only.
TEST(SessionStore, KillingTheWriterMidRunKeepsEveryCommittedStage) {
  TempSession t("kill");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(ready[0]);
    try {
      SessionStore s = SessionStore::open(t.path);
      Pipeline p = mlpTraining();
      int64_t id = record(s, p);
      char c = 'y';
      if (::write(ready[1], &c, 1) != 1) ::_exit(3);
      for (int it = 0;; ++it) {
        std::vector<ProfileSample> batch;
        for (int k = 0; k < 50; ++k) batch.push_back({1, "forward", "kernel" + std::to_string(k), it, 0.5, 1024});
        s.appendProfile(id, batch);
      }
    } catch (...) {
      ::_exit(2);
    }
  }
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1) << "the child failed before recording the stages";
  ::usleep(50 * 1000);  // let it be in the middle of appending
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(ready[0]);
  ASSERT_TRUE(WIFSIGNALED(status));

  SessionStore s = SessionStore::open(t.path, false);
  ASSERT_EQ(s.sessions().size(), 1u);
  int64_t id = s.sessions()[0].id;
  EXPECT_EQ(s.stagesDone(id).size(), 7u);
  EXPECT_FALSE(s.sources(id).empty());
  std::vector<ProfileSample> samples = s.profile(id);
  EXPECT_GT(samples.size(), 0u);
  EXPECT_EQ(samples.size() % 50, 0u) << "a profile batch is committed whole or not at all";
}

TEST(SessionStore, RejectsFilesThatAreNotSessions) {
  TempSession garbage("garbage");
  {
    std::mt19937 rng(7);
    std::ofstream f(garbage.path, std::ios::binary);
    for (int i = 0; i < 8192; ++i) f.put(static_cast<char>(rng()));
  }
  test::expectThrowContaining<SessionError>([&] { SessionStore::open(garbage.path, false); }, garbage.path);

  // Another program's SQLite database, and a session from a newer Fusebox (written here with
  // SQLite directly, as those programs would).
  TempSession foreign("foreign");
  rawSql(foreign.path, "CREATE TABLE invoices(id INTEGER PRIMARY KEY, total REAL)");
  test::expectThrowContaining<SessionError>([&] { SessionStore::open(foreign.path, false); }, "not a Fusebox session file");
  TempSession newer("newer");
  { SessionStore::open(newer.path); }
  rawSql(newer.path, "PRAGMA user_version = 99");
  test::expectThrowContaining<SessionError>([&] { SessionStore::open(newer.path, false); }, "is newer than this Fusebox");
  TempSession missing("missing");
  test::expectThrowContaining<SessionError>([&] { SessionStore::open(missing.path, false); }, "cannot open the session file");
}

// A session file cut short (a copy interrupted, a full disk) is refused with the file's name,
// never read as an empty or partial session.
TEST(SessionStore, RejectsATruncatedFile) {
  TempSession t("truncated");
  {
    SessionStore s = SessionStore::open(t.path);
    int64_t id = s.createSession("mlp", "infer", "cpu");
    StageRecord r;
    r.artifacts = {{"trace", "traced", "text", std::string(20000, 'x'), 1}};
    s.writeStage(id, r);
  }  // closing checkpoints the WAL into the main file
  auto size = fs::file_size(t.path);
  ASSERT_GT(size, 8192u);
  fs::resize_file(t.path, size / 2);
  test::expectThrowContaining<SessionError>([&] {
    SessionStore s = SessionStore::open(t.path, false);
    s.artifacts(1);
  }, t.path);
}

// A file written by schema version 1 (no layout cache) is migrated on open, keeping its sessions.
TEST(SessionStore, MigratesAVersion1File) {
  TempSession t("migrate");
  int64_t id = 0;
  {
    SessionStore s = SessionStore::open(t.path);
    id = s.createSession("mlp", "infer", "cpu");
  }
  rawSql(t.path, "DROP TABLE layout_cache; DROP TABLE graph_node; DROP TABLE kernel_span; DROP TABLE kernel_op; "
                 "DROP TABLE schedule_summary; ALTER TABLE session DROP COLUMN name; ALTER TABLE session DROP COLUMN notes; "
                 "ALTER TABLE session DROP COLUMN tags; ALTER TABLE profile_sample DROP COLUMN start_ms; ALTER TABLE profile_sample DROP COLUMN launch_ms; PRAGMA user_version = 1");
  SessionStore s = SessionStore::open(t.path, false);
  EXPECT_EQ(s.session(id).model, "mlp");
  EXPECT_FALSE(s.cachedLayout("x"));
  s.cacheLayout("x", "layout text");
  EXPECT_EQ(s.cachedLayout("x").value_or(""), "layout text");
  EXPECT_EQ(SessionStore::schemaVersion(), 6);
}

// The session browser's writes: a name, notes and tags kept as written (bounded), statistics from
// the records, and a deleted session gone with everything recorded for it.
TEST(SessionStore, AnnotatesCountsAndDeletesSessions) {
  TempSession t("browse");
  SessionStore s = SessionStore::open(t.path);
  int64_t a = s.createSession("mlp", "train", "cpu"), b = s.createSession("lenet", "infer", "cpu");
  StageRecord r;
  r.kernels = {{"forward", 0, "kernel0", {0}, {1}, 64, {}}, {"forward", 1, "kernel1", {1}, {2}, 64, {}}};
  r.nodes = {{"schedule", "forward", "l0", {1}, "fc"}};
  s.writeStage(a, r);
  int run = s.beginRun(a);
  s.appendProfile(a, {{run, "forward", "kernel0", 0, 1.0, 0}, {run, "forward", "kernel1", 0, 2.0, 0},
                      {run, "forward", "kernel0", 1, 1.5, 0}, {run, "forward", "kernel1", 1, 2.5, 0}});
  std::map<int64_t, SessionStats> stats = s.sessionStats();
  EXPECT_EQ(stats[a].kernels, 2);
  EXPECT_EQ(stats[a].runs, 1);
  EXPECT_DOUBLE_EQ(stats[a].msPerStep, 3.5);  // (1 + 2 + 1.5 + 2.5) / 2 iterations
  EXPECT_EQ(stats.count(b), 0u);
  s.annotateSession(a, "fused <b>baseline</b>", "line one\nline two", "cpu, fused");
  EXPECT_EQ(s.session(a).name, "fused <b>baseline</b>");  // text as written; views show it as plain text
  EXPECT_EQ(s.session(a).notes, "line one\nline two");
  test::expectThrowContaining<SessionError>([&] { s.annotateSession(a, std::string(kMaxSessionNameBytes + 1, 'x'), "", ""); }, "too long");
  test::expectThrowContaining<SessionError>([&] { s.annotateSession(99, "x", "", ""); }, "no session 99");
  s.deleteSession(a);
  ASSERT_EQ(s.sessions().size(), 1u);
  EXPECT_EQ(s.sessions()[0].id, b);
  EXPECT_TRUE(s.kernels(a).empty());
  EXPECT_TRUE(s.nodes(a, "schedule").empty());
  EXPECT_TRUE(s.profile(a).empty());
  test::expectThrowContaining<SessionError>([&] { s.deleteSession(a); }, "no session");
  SessionStore ro = SessionStore::openReadOnly(t.path);
  test::expectThrowContaining<SessionError>([&] { ro.deleteSession(b); }, "");
}

// The profile's per-kernel figures leave out the warm-up iteration (a cold first iteration must
// not move the median or the spread) and give the spread over the rest.
TEST(SessionStore, ProfileFiguresLeaveOutTheWarmUp) {
  TempSession t("warmup");
  SessionStore s = SessionStore::open(t.path);
  int64_t id = s.createSession("mlp", "train", "cpu");
  int run = s.beginRun(id);
  std::vector<double> ms = {50.0, 1.0, 2.0, 3.0, 4.0, 5.0};  // iteration 0 is 10x slower
  std::vector<ProfileSample> samples;
  for (int i = 0; i < static_cast<int>(ms.size()); ++i) samples.push_back({run, "forward", "kernel0", i, ms[static_cast<size_t>(i)], 8});
  s.appendProfile(id, samples);
  std::vector<KernelTiming> t2 = latestRunTimings(s, id);
  ASSERT_EQ(t2.size(), 1u);
  EXPECT_EQ(t2[0].samples, 5);
  EXPECT_DOUBLE_EQ(t2[0].medianMs, 3.0);
  EXPECT_DOUBLE_EQ(t2[0].minMs, 1.0);
  EXPECT_DOUBLE_EQ(t2[0].maxMs, 5.0);
  EXPECT_DOUBLE_EQ(t2[0].p10Ms, 1.0);
  EXPECT_DOUBLE_EQ(t2[0].p90Ms, 5.0);
  EXPECT_EQ(iterationTotals(s, id).size(), 6u);
  EXPECT_EQ(warmupIterations(2), 0);
  EXPECT_EQ(warmupIterations(3), 1);
}

// Schema 3: what a stage's views need (graph nodes' origins and scopes, kernel line spans, kernel
// op lists, schedule summaries) round-trips through the session file; the view of a stage built
// from its stored record equals the one built from the record the pipeline just made; and a file
// of schema 2 (written here with the shipped migrations 1 and 2, as an older Fusebox did) still
// opens, read-only as it is and migrated when opened for writing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sqlite3.h>

#include "core/frontend/fbx_parser.h"
#include "core/frontend/model_loader.h"
#include "core/pipeline/stage_table.h"
#include "report/stage_view.h"
#include "sessions/session_recorder.h"
#include "sessions/session_schema.h"
#include "sessions/session_store.h"
#include "test_util.h"

using namespace fusebox;
namespace fs = std::filesystem;

namespace {

struct TempSession {
  std::string path;
  explicit TempSession(const std::string& name) {
    path = (fs::temp_directory_path() / ("fusebox_records_" + name + "_" + std::to_string(::getpid()) + ".fbs")).string();
    clean();
  }
  ~TempSession() { clean(); }
  void clean() {
    for (const char* s : {"", "-wal", "-shm"}) fs::remove(path + s);
  }
};

void rawSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

// A session file as Fusebox wrote it at schema version 2: one inference session with a traced
// graph and a scheduled kernel.
void writeVersion2File(const std::string& path) {
  std::string sql = std::string(sessionMigrations().at(0)) + sessionMigrations().at(1) +
                    "PRAGMA application_id = " + std::to_string(kSessionApplicationId) + "; PRAGMA user_version = 2;"
                    "INSERT INTO session(id, model, config, target, created) VALUES (1, 'mlp', 'infer target=cpu fusion=on', 'cpu', '2026-01-01T00:00:00Z');"
                    "INSERT INTO artifact VALUES (1, 'trace', 'traced', 'dot', 'digraph \"mlp\" {\n  n0 [label=\"relu\"];\n}\n', 1.5);"
                    "INSERT INTO artifact VALUES (1, 'schedule', 'inference', 'text', 'kernel0 [8 x 4]: n0\n', 0.5);"
                    "INSERT INTO artifact VALUES (1, 'schedule', 'inference', 'dot', 'digraph \"s\" {\n  l0;\n}\n', 0.5);"
                    "INSERT INTO kernel VALUES (1, 'inference', 0, 'kernel0', '0', '0', 64);"
                    "INSERT INTO source VALUES (1, 'inference', 'cpp', 'void kernel0() {}\n');";
  rawSql(path, sql);
}

}  // namespace

TEST(StageRecords, AVersion2FileOpensReadOnlyAndMigratesForWriting) {
  TempSession t("v2");
  writeVersion2File(t.path);
  {
    SessionStore s = SessionStore::openReadOnly(t.path);  // not migrated: reads what is there
    EXPECT_EQ(s.sessions().at(0).name, "");  // no schema-4 columns: empty
    StageRecord trace = s.stageRecord(1, "trace");
    ASSERT_EQ(trace.artifacts.size(), 1u);
    EXPECT_TRUE(trace.nodes.empty());
    StageView v = stageView(Stage::Trace, trace);
    ASSERT_EQ(v.graphs.size(), 1u);
    EXPECT_EQ(v.graphs[0].name, "traced");
    EXPECT_TRUE(v.graphs[0].origins.empty());
    StageView sched = stageView(Stage::Schedule, s.stageRecord(1, "schedule"));
    EXPECT_EQ(sched.text, "inference:\nkernel0 [8 x 4]: n0\n");  // no summary: the graph names it
    ASSERT_EQ(s.kernels(1).size(), 1u);
    EXPECT_TRUE(s.kernels(1)[0].ops.empty());
    EXPECT_TRUE(s.kernelSpans(1).empty());
    StageView code = stageView(Stage::Codegen, s.stageRecord(1, "codegen"));
    ASSERT_EQ(code.code.size(), 1u);
    EXPECT_EQ(code.code[0].title, "C++ inference");
    EXPECT_TRUE(code.code[0].kernels.empty());
  }
  SessionStore s = SessionStore::open(t.path, false);  // migrated to the current schema
  EXPECT_EQ(SessionStore::schemaVersion(), 6);
  EXPECT_EQ(s.session(1).model, "mlp");
  EXPECT_EQ(s.session(1).notes, "");
  s.annotateSession(1, "baseline", "first try", "cpu,baseline");
  EXPECT_EQ(s.session(1).tags, "cpu,baseline");
  EXPECT_EQ(s.stageRecord(1, "trace").artifacts.at(0).ms, 1.5);
  StageRecord r;
  r.nodes = {{"trace", "traced", "n0", {0}, "block.fc"}};
  r.kernels = {{"inference", 1, "kernel1", {1, 2}, {0}, 32, {{1, "prims.mul", true}, {2, "prims.add"}}}};
  r.spans = {{"inference", "cpp", 1, "kernel1", 3, 9, {0}}};
  r.schedules = {{"inference", "mlp.prims", 4096, {1024, 4096}, {2048, 4096}}};
  s.writeStage(1, r);
  EXPECT_EQ(s.nodes(1, "trace"), r.nodes);
  EXPECT_EQ(s.kernels(1).at(1).ops, r.kernels[0].ops);
  EXPECT_TRUE(s.kernels(1).at(0).ops.empty());  // the kernel the old file held
  EXPECT_EQ(s.kernelSpans(1), r.spans);
  EXPECT_EQ(s.schedules(1), r.schedules);
  EXPECT_EQ(stageView(Stage::Schedule, s.stageRecord(1, "schedule")).text, "mlp.prims:\nkernel0 [8 x 4]: n0\n");
  test::expectThrowContaining<SessionError>([&] { s.stageRecord(1, "fuse"); }, "no pipeline stage is named 'fuse'");
}

// Every stage of a training compile: the view from the stored record is the view from the record
// the pipeline made, and it holds what the pipeline computed.
TEST(StageRecords, ViewFromTheStoredRecordEqualsTheLiveOne) {
  TempSession t("live");
  SessionStore s = SessionStore::open(t.path);
  PipelineConfig cfg;
  cfg.train = true;
  Pipeline p(loadModel("mlp"), cfg);
  int64_t id = s.createSession("mlp", describeConfig(cfg), cfg.target);
  while (std::optional<Stage> next = p.nextStage()) {
    p.step();
    StageRecord live = stageRecord(p, *next);
    s.writeStage(id, live);
    StageRecord stored = s.stageRecord(id, stageName(*next));
    SCOPED_TRACE(stageName(*next));
    EXPECT_EQ(stored.nodes, live.nodes);
    EXPECT_EQ(stored.spans, live.spans);
    EXPECT_EQ(stored.schedules, live.schedules);
    EXPECT_TRUE(stageView(*next, stored) == stageView(*next, live));
  }

  StageView trace = stageView(Stage::Trace, s.stageRecord(id, "trace"));
  EXPECT_EQ(trace.pane, stageDescriptor(Stage::Trace).pane);
  ASSERT_EQ(trace.graphs.size(), 1u);
  for (const Node& n : p.traced().nodes()) EXPECT_EQ(trace.graphs[0].origins.at("n" + std::to_string(n.id)), std::vector<int64_t>{n.id});
  std::vector<StoredNode> prims = s.nodes(id, "decompose");
  ASSERT_EQ(prims.size(), p.prims()[0].nodes().size() + p.prims()[1].nodes().size());
  for (const StoredNode& n : prims)
    if (n.graph == "forward") {
      const Node& node = p.prims()[0].node(std::stoi(n.node.substr(1)));
      EXPECT_EQ(n.origins, std::vector<int64_t>(node.provenance.begin(), node.provenance.end()));
      EXPECT_EQ(n.scope, node.scope);
    }

  StageView sched = stageView(Stage::Schedule, s.stageRecord(id, "schedule"));
  EXPECT_EQ(sched.peakBytes, p.schedules()[0].memory.peakIntermediateBytes + p.schedules()[1].memory.peakIntermediateBytes);
  EXPECT_EQ(sched.text, p.loops()[0].name + ":\n" + p.schedules()[0].str() + p.loops()[1].name + ":\n" + p.schedules()[1].str());
  ASSERT_EQ(sched.graphs.size(), 2u);
  EXPECT_EQ(sched.graphs[1].origins.size(), p.loops()[1].nodes.size());
  for (const StoredKernel& k : s.kernels(id)) {
    EXPECT_FALSE(k.ops.empty()) << k.name;
    for (const StoredKernelOp& op : k.ops) EXPECT_NE(std::find(k.nodes.begin(), k.nodes.end(), op.node), k.nodes.end()) << k.name;
  }

  StageView code = stageView(Stage::Codegen, s.stageRecord(id, "codegen"));
  std::vector<std::string> titles;
  for (const CodeViewData& c : code.code) titles.push_back(c.title);
  EXPECT_EQ(titles, (std::vector<std::string>{"C++ forward", "CUDA forward", "C++ backward", "CUDA backward"}));
  const GeneratedModule& fwd = p.modules("cpu")[0];
  EXPECT_EQ(code.code[0].text, fwd.source);
  ASSERT_EQ(code.code[0].kernels.size(), fwd.kernels.size());
  for (size_t i = 0; i < fwd.kernels.size(); ++i) {
    EXPECT_EQ(code.code[0].kernels[i].name, fwd.kernels[i].name);
    EXPECT_EQ(code.code[0].kernels[i].firstLine, fwd.kernels[i].firstLine);
    EXPECT_EQ(code.code[0].kernels[i].lastLine, fwd.kernels[i].lastLine);
  }
  EXPECT_EQ(code.code[3].kernels.size(), p.modules("cuda")[1].kernels.size());
}

namespace fusebox {
namespace {

// A kernel claims only the traced nodes it computes: in a training step of six relu blocks, the
// one zero constant CSE shares among every relu's backward must not make a kernel claim the
// relus of other blocks (the GUI would light them all), and a kernel lists each origin once.
TEST(StageRecords, KernelsClaimOnlyWhatTheyCompute) {
  std::string src = "model blocks(x: f32[4, 16]) {\n  h0 = x\n";
  for (int i = 1; i <= 6; ++i)
    src += "  scope block" + std::to_string(i) + " {\n    param w: f32[16, 16] = randn(seed=" + std::to_string(i) +
           ", std=0.3)\n    h" + std::to_string(i) + " = relu(linear(h" + std::to_string(i - 1) + ", w))\n  }\n";
  src += "  return sum(h6 * h6)\n}\n";
  PipelineConfig config;
  config.train = true;
  Pipeline p(parseModel(src, "blocks.fbx"), config);
  while (p.nextStage()) p.step();
  std::set<int64_t> relus;
  for (const Node& n : p.traced().nodes())
    if (n.op == "relu") relus.insert(n.id);
  ASSERT_EQ(relus.size(), 6u);
  StageRecord r = stageRecord(p, Stage::Schedule);
  ASSERT_FALSE(r.kernels.empty());
  for (const StoredKernel& k : r.kernels) {
    int claimed = static_cast<int>(std::count_if(k.provenance.begin(), k.provenance.end(), [&](int64_t o) { return relus.count(o) > 0; }));
    EXPECT_LE(claimed, 2) << k.graph << " " << k.name;
    EXPECT_TRUE(std::is_sorted(k.provenance.begin(), k.provenance.end()));
    EXPECT_EQ(std::adjacent_find(k.provenance.begin(), k.provenance.end()), k.provenance.end()) << k.name;
  }
}

}  // namespace
}  // namespace fusebox

// Reports from sessions: Graphviz layout in process, the HTML report, and the fusion comparison
// of a fused and an unfused compile of the same model.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <set>

#include "core/codegen/cpu/jit_compiler.h"
#include "core/frontend/model_loader.h"
#include "core/runtime/model_runner.h"
#include "report/graph_layout.h"
#include "report/html_report.h"
#include "report/session_compare.h"
#include "report/session_summary.h"
#include "sessions/session_recorder.h"
#include "test_util.h"

using namespace fusebox;
namespace fs = std::filesystem;

TEST(GraphLayout, LaysOutNodesEdgesAndClusters) {
  GraphLayout l = layoutDot(R"(digraph g { subgraph cluster_k0 { label="kernel0"; a [label="add\nf32[4]"]; b; } a -> b; b -> c; })");
  ASSERT_EQ(l.nodes.size(), 3u);
  EXPECT_EQ(l.nodes[0].name, "a");
  EXPECT_EQ(l.nodes[0].label, "add\nf32[4]");
  EXPECT_GT(l.width, 0);
  EXPECT_GT(l.height, 0);
  EXPECT_LT(l.nodes[0].y, l.nodes[1].y) << "rank order top to bottom (y grows downwards)";
  ASSERT_EQ(l.edges.size(), 2u);
  EXPECT_GE(l.edges[0].points.size(), 4u);
  ASSERT_EQ(l.clusters.size(), 1u);
  EXPECT_EQ(l.clusters[0].label, "kernel0");
  EXPECT_LE(l.clusters[0].x0, l.nodes[0].x);
  EXPECT_GE(l.clusters[0].x1, l.nodes[0].x);
}

TEST(GraphLayout, MalformedDotIsAnError) {
  test::expectThrowContaining<LayoutError>([] { layoutDot("digraph { a -> "); }, "Graphviz cannot read the graph");
  EXPECT_NE(renderSvg("digraph { a -> b }").find("<svg"), std::string::npos);
}

namespace {

struct Recorded {
  std::string path;
  int64_t fused = 0, unfused = 0;
  SessionStore store;
  ~Recorded() {
    for (const char* s : {"", "-wal", "-shm"}) fs::remove(path + s);
  }
};

// mlp training compiled twice into one file, fused and unfused, each run 3 iterations on the CPU
// when the JIT is built in (else compiled only).
Recorded recordBoth() {
  std::string path = (fs::temp_directory_path() / ("fusebox_report_" + std::to_string(::getpid()) + ".fbs")).string();
  for (const char* s : {"", "-wal", "-shm"}) fs::remove(path + s);
  SessionStore store = SessionStore::open(path);
  int64_t ids[2];
  for (int i = 0; i < 2; ++i) {
    PipelineConfig cfg;
    cfg.train = true;
    cfg.schedule.fusion = i == 0;
    Pipeline p(loadModel("mlp"), cfg);
    ids[i] = store.createSession("mlp", describeConfig(cfg), cfg.target);
    runAndRecord(p, store, ids[i]);
    if (cpuJitAvailable()) runOnCpu(p, 3, 1, 1, false, recordingHooks(store, ids[i], store.beginRun(ids[i]), "cpu"));
  }
  return {path, ids[0], ids[1], std::move(store)};
}

}  // namespace

TEST(Report, HtmlHasGraphsDecisionsProfileAndCode) {
  Recorded r = recordBoth();
  std::string html = htmlReport(r.store, r.fused);
  EXPECT_EQ(html.find("<!DOCTYPE html>"), 0u);
  EXPECT_NE(html.find("<h3>trace: traced</h3><div class=graph><svg"), std::string::npos);
  EXPECT_NE(html.find("<h3>schedule: backward</h3><div class=graph><svg"), std::string::npos);
  EXPECT_NE(html.find("fused: "), std::string::npos) << "the decision log's reasons";
  EXPECT_NE(html.find("forward · cpp"), std::string::npos);
  EXPECT_EQ(html.find("src=\"http"), std::string::npos) << "self-contained";
  // both partitioners side by side, and each kernel's ops with min-cut's recomputed ones starred
  EXPECT_NE(html.find("<h3>default vs min-cut</h3><p>min-cut keeps"), std::string::npos);
  EXPECT_NE(html.find("recomputed in the backward (in order):"), std::string::npos);
  EXPECT_NE(html.find("recomputed in the backward)</td>"), std::string::npos) << "a backward kernel with recomputed ops";
  if (cpuJitAvailable()) {
    std::vector<KernelTiming> ts = latestRunTimings(r.store, r.fused);
    ASSERT_FALSE(ts.empty());
    EXPECT_EQ(ts[0].samples, 2);  // 3 iterations, the first a warm-up left out of the figures
    EXPECT_LE(ts[0].p10Ms, ts[0].medianMs);
    EXPECT_LE(ts[0].medianMs, ts[0].p90Ms);
    EXPECT_LE(ts[0].p90Ms, ts[0].maxMs);
    // when each kernel began in its iteration: the first at 0, the others later (launch order)
    EXPECT_EQ(ts[0].startMs, 0);
    EXPECT_EQ(ts[0].launchMs, -1);  // the CPU backend's host runs its kernels: no launch track
    for (size_t i = 1; i < ts.size(); ++i) EXPECT_GE(ts[i].startMs, ts[i - 1].startMs + ts[i - 1].minMs * 0.5) << ts[i].kernel;
    EXPECT_EQ(iterationTotals(r.store, r.fused).size(), 3u);  // the timeline keeps every iteration
    EXPECT_NE(html.find("Per-iteration kernel time"), std::string::npos);
    EXPECT_NE(html.find("forward · llvm_ir"), std::string::npos);
  }
  // what a printed report leaves out: the compilers' listings and the other target's code
  ReportOptions printed;
  printed.compiledCode = false;
  printed.ownTargetOnly = true;
  std::string short_ = htmlReport(r.store, r.fused, printed);
  EXPECT_NE(short_.find("forward · cpp"), std::string::npos);
  EXPECT_EQ(short_.find("forward · llvm_ir"), std::string::npos);
  EXPECT_EQ(short_.find("forward · cuda"), std::string::npos);
  EXPECT_NE(short_.find("left out"), std::string::npos);
}

TEST(Report, ComparisonShowsWhatFusedDifferently) {
  Recorded r = recordBoth();
  FusionComparison c = compareSessions(r.store, r.fused, r.store, r.unfused);
  EXPECT_GT(c.kernelsB, c.kernelsA) << "unfused has one kernel per loop-IR node";
  // another model's session: its traced ops are others, so no comparison at all
  int64_t other = r.store.createSession("lenet", "train", "cpu");
  test::expectThrowContaining<SessionError>([&] { compareSessions(r.store, r.fused, r.store, other); },
                                            "a fusion comparison needs two sessions of the same model");
  // matched by traced provenance and named by the traced graph: unfused, a traced op that the
  // fused side computes with others is split over several kernels
  ASSERT_FALSE(c.regrouped.empty());
  bool named = false, split = false;
  for (const TracedRegrouping& g : c.regrouped) {
    named |= g.label.rfind("linear", 0) == 0 || g.label.rfind("relu", 0) == 0;
    split |= g.kernelsB.size() > g.kernelsA.size();
  }
  EXPECT_TRUE(named) << c.regrouped[0].label;
  EXPECT_TRUE(split);
  bool fusedOnlyInA = false;
  for (const DecisionDiff& d : c.decisions) {
    fusedOnlyInA |= d.fusedA && !d.fusedB;
    EXPECT_NE(d.what.find(" + "), std::string::npos);
  }
  EXPECT_TRUE(fusedOnlyInA);
  if (cpuJitAvailable()) {  // kernels paired by what they compute, each change judged against the noise
    ASSERT_FALSE(c.kernels.empty());
    size_t paired = 0, onlyB = 0;
    for (const KernelDelta& d : c.kernels) {
      paired += d.paired();
      onlyB += d.kernelA.empty();
      EXPECT_GE(d.noiseMs, 0);
      if (d.paired()) {
        EXPECT_GT(d.overlap, 0);
      }
    }
    EXPECT_EQ(paired, c.timingsA.size()) << "every fused kernel has an unfused counterpart";
    EXPECT_EQ(paired + onlyB, c.timingsB.size());
    EXPECT_GT(c.totalMsA, 0);
  }
  std::string html = htmlComparisonReport(r.store, r.fused, r.store, r.unfused);
  EXPECT_NE(html.find("Traced ops computed with different ops (" + std::to_string(c.regrouped.size()) + ")"), std::string::npos);
  EXPECT_NE(html.find("fusion=off"), std::string::npos);
  if (cpuJitAvailable()) {
    EXPECT_NE(html.find("<h2>Kernel time changes</h2>"), std::string::npos);
  }
}

// Two compiles whose loop-IR ids differ (default vs min-cut partitions) are still compared op by
// op: the forward computes the same traced ops in both, so nothing there is regrouped by id noise.
TEST(Report, ComparisonAcrossPartitionersMatchesByProvenance) {
  std::string path = (fs::temp_directory_path() / ("fusebox_cmp_" + std::to_string(::getpid()) + ".fbs")).string();
  for (const char* s : {"", "-wal", "-shm"}) fs::remove(path + s);
  {
    SessionStore store = SessionStore::open(path);
    int64_t ids[2];
    for (int i = 0; i < 2; ++i) {
      PipelineConfig cfg;
      cfg.train = true;
      cfg.partitioner = i == 0 ? Partitioner::Default : Partitioner::MinCut;
      Pipeline p(loadModel("mlp_gelu_ln"), cfg);
      ids[i] = store.createSession("mlp_gelu_ln", describeConfig(cfg), cfg.target);
      runAndRecord(p, store, ids[i]);
    }
    FusionComparison c = compareSessions(store, ids[0], store, ids[1]);
    // min-cut recomputes in the backward: there the traced ops computed together differ; most of
    // the forward is the same computation under other loop-IR ids, and is not listed
    size_t backward = 0, forward = 0;
    for (const TracedRegrouping& g : c.regrouped) (g.graph == "backward" ? backward : forward) += 1;
    EXPECT_GT(backward, 0u);
    std::set<int64_t> tracedOps;
    for (const StoredKernel& k : store.kernels(ids[0]))
      if (k.graph == "forward") tracedOps.insert(k.provenance.begin(), k.provenance.end());
    EXPECT_LT(forward, tracedOps.size());
    for (const TracedRegrouping& g : c.regrouped)  // named by the traced graph, not "n12"
      EXPECT_FALSE(g.label.size() > 1 && g.label[0] == 'n' && std::isdigit(static_cast<unsigned char>(g.label[1]))) << g.label;
  }
  for (const char* s : {"", "-wal", "-shm"}) fs::remove(path + s);
}

// The session's layout cache stores what Graphviz computed and gives it back exactly.
TEST(GraphLayout, SerializesForTheCache) {
  GraphLayout l = layoutDot("digraph g { subgraph cluster_a { label=\"k\\t0\"; a [label=\"x\\ny\", tooltip=\"tab\\there\"]; } a -> b; }");
  GraphLayout back = parseLayout(serializeLayout(l));
  ASSERT_EQ(back.nodes.size(), l.nodes.size());
  EXPECT_EQ(back.nodes[0].label, l.nodes[0].label);
  EXPECT_EQ(back.nodes[0].tooltip, l.nodes[0].tooltip);
  EXPECT_DOUBLE_EQ(back.nodes[1].y, l.nodes[1].y);
  ASSERT_EQ(back.edges.size(), 1u);
  EXPECT_EQ(back.edges[0].points, l.edges[0].points);
  EXPECT_TRUE(l.edges[0].arrow);  // a digraph's edge ends in an arrowhead, below its tail
  EXPECT_GT(l.edges[0].arrowY, l.edges[0].points.front().second);
  EXPECT_EQ(back.edges[0].arrow, l.edges[0].arrow);
  EXPECT_DOUBLE_EQ(back.edges[0].arrowY, l.edges[0].arrowY);
  ASSERT_EQ(back.clusters.size(), 1u);
  EXPECT_EQ(back.clusters[0].label, l.clusters[0].label);
  EXPECT_NE(dotHash("digraph { a }"), dotHash("digraph { b }"));
  test::expectThrowContaining<LayoutError>([] { parseLayout("fusebox-layout 2\t1\t1\nN\tbroken\n"); }, "malformed layout line");
  // a cache entry written by an older version is laid out again, not misread
  test::expectThrowContaining<LayoutError>([] { parseLayout("fusebox-layout 1\t1\t1\n"); }, "older version");
}

// The parts of a graph before layout, from the rebuilt (safe) text: nodes with their innermost
// cluster, edges, nested clusters.
TEST(GraphLayout, ParsesTheGraphsParts) {
  DotGraph g = parseDot(
      "digraph g { subgraph cluster_a { label=\"A\"; subgraph cluster_b { label=\"B\"; b [label=\"x\\ny\", URL=\"http://e\"]; } a; }"
      " c; a -> b; b -> c; }");
  ASSERT_EQ(g.nodes.size(), 3u);
  std::map<std::string, DotNode> byName;
  for (const DotNode& n : g.nodes) byName[n.name] = n;
  EXPECT_EQ(byName["b"].label, "x\ny");
  EXPECT_EQ(byName["b"].cluster, "cluster_b");
  EXPECT_EQ(byName["a"].cluster, "cluster_a");
  EXPECT_EQ(byName["c"].cluster, "");
  EXPECT_EQ(g.edges.size(), 2u);
  ASSERT_EQ(g.clusters.size(), 2u);
  EXPECT_EQ(g.clusters[1].parent, "cluster_a");
  test::expectThrowContaining<LayoutError>([] { parseDot("digraph { {a b} -> c }"); }, "refused");
}

// A kernel time change is judged against the two runs' spreads, and never below the timer's own
// resolution: with one sample each the spread is 0, and a few nanoseconds are not a change.
TEST(Report, KernelTimeChangesBelowTheNoiseOrTheTimerAreNotChanges) {
  KernelDelta d{"forward", "kernel1", "kernel1", 0.00200, 0.00201, 0.0, 1.0};
  EXPECT_FALSE(d.beyondNoise());
  d.msB = 0.0030;  // a microsecond: beyond a zero spread
  EXPECT_TRUE(d.beyondNoise());
  d.noiseMs = 0.002;  // but within a wider spread
  EXPECT_FALSE(d.beyondNoise());
  d.kernelB.clear();  // unpaired kernels are not compared at all
  EXPECT_FALSE(d.beyondNoise());
}

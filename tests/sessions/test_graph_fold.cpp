// Folding a stage graph by module scope (report/graph_fold.h): what is boxed, where unscoped
// nodes go, how edges merge, what search finds; and on a real pipeline graph, that every node of
// the graph is drawn exactly once at every expansion.
#include <gtest/gtest.h>

#include "core/frontend/model_loader.h"
#include "report/graph_fold.h"
#include "report/stage_view.h"
#include "sessions/session_recorder.h"
#include "test_util.h"

namespace fusebox {
namespace {

// x -> conv (layer1.0.conv1, weight w) -> relu (layer1.0) -> add (layer1) -> fc (fc) -> out
DotGraph smallNet() {
  return parseDot(
      "digraph net {\n"
      " x [shape=ellipse, label=\"x\"]; w [shape=ellipse, label=\"w\"];\n"
      " n1 [label=\"conv\\nf32[1, 8]\", tooltip=\"conv\\nscope: layer1.0.conv1\"]; n2 [label=\"relu\"]; n3 [label=\"add\"];\n"
      " n4 [label=\"bias_add\"]; n5 [label=\"matmul\"]; n6 [label=\"flatten\"];\n"
      " out0 [shape=plaintext, label=\"output 0\"];\n"
      " x -> n1; w -> n1; n1 -> n2; n2 -> n3; x -> n3; n3 -> n6; n6 -> n5; n5 -> n4; n4 -> out0;\n"
      "}\n");
}

std::map<std::string, std::string> smallNetScopes() {
  return {{"n1", "layer1.0.conv1"}, {"n2", "layer1.0"}, {"n3", "layer1"}, {"n4", "fc"}, {"n5", "fc"}, {"n6", ""}};
}

int countOf(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ScopeFolding, LevelsAreDottedPrefixes) {
  EXPECT_EQ(scopeLevels("layer2.0.conv1"), (std::vector<std::string>{"layer2", "layer2.0", "layer2.0.conv1"}));
  EXPECT_TRUE(scopeLevels("").empty());
}

TEST(ScopeFolding, BoxesCollapsedScopesAndMergesTheirEdges) {
  ScopeFolding f(smallNet(), smallNetScopes(), false);
  // layer1.0.conv1 holds one op: never a box; layer1.0 (conv, relu) and layer1 and fc are.
  EXPECT_EQ(f.scopes(), (std::vector<std::string>{"fc", "layer1", "layer1.0"}));
  EXPECT_EQ(f.placement("w"), "layer1.0");  // the weight goes with its only consumer
  EXPECT_EQ(f.placement("x"), "layer1");    // read in layer1.0 and layer1: their common scope
  EXPECT_EQ(f.placement("out0"), "");       // outputs stay at the top

  std::set<std::string> none;
  std::string layer1 = f.visibleItem("n2", none);
  EXPECT_EQ(f.boxScope(layer1), "layer1");
  EXPECT_EQ(f.visibleItem("n1", none), layer1);
  EXPECT_EQ(f.visibleItem("x", none), layer1);
  EXPECT_EQ(f.visibleItem("n6", none), "n6");
  EXPECT_EQ(f.boxScope("n6"), "");
  GraphLayout top = layoutDot(f.foldedDot(none));
  EXPECT_EQ(top.nodes.size(), 4u);  // layer1, flatten, fc, output 0
  EXPECT_EQ(top.edges.size(), 3u);  // x->n1, n2->n3 ... all inside layer1: merged away

  std::set<std::string> open = {"layer1"};
  EXPECT_EQ(f.boxScope(f.visibleItem("n1", open)), "layer1.0");
  EXPECT_EQ(f.visibleItem("n3", open), "n3");
  GraphLayout one = layoutDot(f.foldedDot(open));
  EXPECT_EQ(one.nodes.size(), 6u);  // layer1.0 box, x, add, flatten, fc, output
  ASSERT_EQ(one.clusters.size(), 1u);
  EXPECT_EQ(one.clusters[0].label, "layer1");

  std::set<std::string> all = f.expansionToDepth(99);
  EXPECT_EQ(all.size(), 3u);
  GraphLayout full = layoutDot(f.foldedDot(all));
  EXPECT_EQ(full.nodes.size(), 9u);
  EXPECT_EQ(full.edges.size(), 9u);
  EXPECT_EQ(f.revealing("n1", {}), (std::set<std::string>{"layer1", "layer1.0"}));
  EXPECT_EQ(f.expansionToDepth(1), (std::set<std::string>{"fc", "layer1"}));
}

TEST(ScopeFolding, DescribesABoxByItsOps) {
  ScopeFolding f(smallNet(), smallNetScopes(), false);
  EXPECT_EQ(f.members("layer1.0"), (std::vector<std::string>{"w", "n1", "n2"}));
  EXPECT_EQ(f.describeScope("fc"), "fc: 2 nodes (bias_add 1, matmul 1)");
}

TEST(ScopeFolding, FindsByOpNameScopeAndKernel) {
  ScopeFolding f(smallNet(), smallNetScopes(), false);
  EXPECT_EQ(f.find("CONV"), (std::vector<std::string>{"n1"}));
  EXPECT_EQ(f.find("layer1.0"), (std::vector<std::string>{"w", "n1", "n2"}));  // by scope
  EXPECT_EQ(f.find("out0"), (std::vector<std::string>{"out0"}));            // by node name
  EXPECT_TRUE(f.find("nothing like it").empty());
  EXPECT_TRUE(f.find("").empty());
  ScopeFolding k(parseDot("digraph s { subgraph cluster_k0 { label=\"kernel_0 (2 nodes)\"; l1; l2; } l3; l1 -> l2; l2 -> l3; }"),
                 {{"l1", "a"}, {"l2", "a"}, {"l3", "b"}}, true);
  EXPECT_EQ(k.find("kernel_0"), (std::vector<std::string>{"l1", "l2"}));
}

// A long label line keeps its end (where a constant's name differs) and the whole text goes to
// the tooltip.
TEST(ScopeFolding, CutsLongLabelLinesToTheirEnd) {
  const std::string name = "/features/features.18/features.18.2/Constant_output_0";
  ScopeFolding f(parseDot("digraph g { a [label=\"" + name + "\\nf32[]\"]; }"), {}, false);
  GraphLayout l = layoutDot(f.foldedDot({}));
  ASSERT_EQ(l.nodes.size(), 1u);
  EXPECT_EQ(l.nodes[0].label, "\u2026" + name.substr(name.size() - 39) + "\nf32[]");
  EXPECT_EQ(l.nodes[0].tooltip, name + "\nf32[]");
}

// A wrapper module around the whole model is opened through at the start.
TEST(ScopeFolding, OpensThroughAWrapperScope) {
  DotGraph g = parseDot("digraph g { a; b; c; d; a -> b; b -> c; c -> d; }");
  ScopeFolding f(g, {{"a", "m.enc.0"}, {"b", "m.enc.0"}, {"c", "m.enc.1"}, {"d", "m.enc.1"}}, false);
  EXPECT_EQ(f.initialExpansion(), (std::set<std::string>{"m", "m.enc"}));
}

// Kernel clusters stay what they are; boxes sit beside them.
TEST(ScopeFolding, KeepsKernelClusters) {
  ScopeFolding f(parseDot("digraph s { subgraph cluster_k0 { label=\"kernel_0\"; l1; l2; } subgraph cluster_k1 { label=\"kernel_1\"; l3; l4; }"
                          " l1 -> l2; l2 -> l3; l3 -> l4; }"),
                 {{"l1", "a"}, {"l2", "a"}, {"l3", "b"}, {"l4", "b"}}, true);
  std::string folded = f.foldedDot({"a"});
  EXPECT_EQ(countOf(folded, "subgraph"), 1);  // kernel_0 with a's nodes; kernel_1 is inside b's box
  EXPECT_NE(folded.find("kernel_0"), std::string::npos);
  EXPECT_EQ(layoutDot(folded).nodes.size(), 3u);
}

// A hostile node name that looks like a box name does not capture it.
TEST(ScopeFolding, BoxNamesNeverCollideWithNodes) {
  ScopeFolding f(parseDot("digraph g { \"scope#0\"; a; b; a -> b; b -> \"scope#0\"; }"), {{"a", "s"}, {"b", "s"}}, false);
  std::string box = f.visibleItem("a", {});
  EXPECT_NE(box, "scope#0");
  EXPECT_EQ(f.boxScope(box), "s");
  EXPECT_EQ(f.boxScope("scope#0"), "");
  EXPECT_EQ(f.visibleItem("scope#0", {}), box);  // placed with its producer, inside the box
  EXPECT_EQ(layoutDot(f.foldedDot({})).nodes.size(), 1u);
}

// Every stage graph of a real pipeline run folds so that each node is drawn exactly once, boxed
// or as itself, at every depth; and the top level is much smaller than the graph.
TEST(ScopeFolding, EveryNodeIsDrawnOnceAtEveryDepth) {
  PipelineConfig config;
  config.train = true;
  Pipeline p(loadModel("gpt2_block"), config);
  while (p.nextStage()) p.step();
  for (Stage s : {Stage::Trace, Stage::Partition, Stage::Decompose, Stage::Schedule}) {
    StageRecord r = stageRecord(p, s);
    StageView v = stageView(s, r);
    ASSERT_FALSE(v.graphs.empty()) << stageName(s);
    for (const GraphViewData& g : v.graphs) {
      ScopeFolding f(parseDot(g.dot), g.scopes, g.kernelClusters);
      ASSERT_FALSE(f.scopes().empty()) << g.name;
      for (int depth : {0, 1, 2, 99}) {
        std::set<std::string> expanded = f.expansionToDepth(depth);
        GraphLayout l = layoutDot(f.foldedDot(expanded));
        std::set<std::string> drawn;
        for (const LayoutNode& n : l.nodes) drawn.insert(n.name);
        std::set<std::string> expected;
        for (const DotNode& n : f.graph().nodes) expected.insert(f.visibleItem(n.name, expanded));
        EXPECT_EQ(drawn, expected) << stageName(s) << " " << g.name << " depth " << depth;
        if (depth == 0) EXPECT_LT(l.nodes.size() * 3, f.graph().nodes.size()) << stageName(s) << " " << g.name << [&] {
          std::string all;
          for (const std::string& i : drawn) all += " " + (f.boxScope(i).empty() ? i : "[" + f.boxScope(i) + "]");
          return all;
        }();
        if (depth == 99) EXPECT_EQ(l.nodes.size(), f.graph().nodes.size());
      }
    }
  }
}

}  // namespace
}  // namespace fusebox

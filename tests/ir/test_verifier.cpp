#include <gtest/gtest.h>

#include "core/ir/verifier.h"
#include "core/ops/registry.h"
#include "test_util.h"

using namespace fusebox;

namespace {

// x: f32[4, 3] -> relu(x) + x
Graph smallGraph() {
  Graph g;
  g.name = "small";
  ValueId x = g.addInput("x", {DType::F32, {4, 3}}, InputRole::Input);
  NodeId r = g.addNode("relu", {x}, {}, {{DType::F32, {4, 3}}});
  NodeId a = g.addNode("add", {g.node(r).outputs[0], x}, {}, {{DType::F32, {4, 3}}});
  g.setOutputs({g.node(a).outputs[0]});
  return g;
}

}  // namespace

TEST(Verifier, AcceptsWellFormedGraph) { EXPECT_NO_THROW(verifyGraph(smallGraph(), torchOpTyper())); }

TEST(Verifier, RejectsWrongOutputType) {
  Graph g = smallGraph();
  Graph bad;
  bad.name = "bad";
  ValueId x = bad.addInput("x", {DType::F32, {4, 3}}, InputRole::Input);
  NodeId r = bad.addNode("relu", {x}, {}, {{DType::F32, {4, 4}}});
  bad.setOutputs({bad.node(r).outputs[0]});
  test::expectThrowContaining<VerifyError>([&] { verifyGraph(bad, torchOpTyper()); },
                                           "output 0 is recorded as f32[4, 4] but the op infers f32[4, 3]");
}

TEST(Verifier, RejectsUseBeforeDefinition) {
  Graph g = smallGraph();
  std::swap(g.mutableNodes()[0], g.mutableNodes()[1]);
  test::expectThrowContaining<VerifyError>([&] { verifyGraph(g, torchOpTyper()); }, "before it is defined");
}

TEST(Verifier, RejectsUnknownOpAndNamesTheNode) {
  Graph g;
  g.name = "g";
  ValueId x = g.addInput("x", {DType::F32, {2}}, InputRole::Input);
  NodeId n = g.addNode("frobnicate", {x}, {}, {{DType::F32, {2}}}, "blk", SourceLoc{"m.fbx", 3, 9});
  g.setOutputs({g.node(n).outputs[0]});
  test::expectThrowContaining<VerifyError>([&] { verifyGraph(g, torchOpTyper()); },
                                           "node 0 (frobnicate, scope blk, at m.fbx:3:9): unknown op 'frobnicate'");
}

TEST(Verifier, RejectsMissingOutputsAndBadProvenance) {
  Graph g = smallGraph();
  g.setOutputs({});
  test::expectThrowContaining<VerifyError>([&] { verifyGraph(g, torchOpTyper()); }, "graph has no outputs");
  Graph h = smallGraph();
  h.mutableNodes()[0].provenance = {5, 2};
  test::expectThrowContaining<VerifyError>([&] { verifyGraph(h, torchOpTyper()); }, "provenance must be sorted");
  Graph k = smallGraph();
  k.mutableNodes()[1].provenance.clear();
  test::expectThrowContaining<VerifyError>([&] { verifyGraph(k, torchOpTyper()); }, "empty provenance");
}

TEST(Verifier, RejectsUnnormalizedAttributesAndSymbolicParams) {
  Graph g;
  g.name = "g";
  ValueId x = g.addInput("x", {DType::F32, {2, 3}}, InputRole::Input);
  NodeId n = g.addNode("softmax", {x}, {}, {{DType::F32, {2, 3}}});  // "dim" default not filled in
  g.setOutputs({g.node(n).outputs[0]});
  test::expectThrowContaining<VerifyError>([&] { verifyGraph(g, torchOpTyper()); }, "not normalized");

  Graph p;
  p.name = "p";
  ValueId w = p.addInput("w", {DType::F32, {Dim::symbol("C")}}, InputRole::Param);
  NodeId r = p.addNode("relu", {w}, {}, {{DType::F32, {Dim::symbol("C")}}});
  p.setOutputs({p.node(r).outputs[0]});
  test::expectThrowContaining<VerifyError>([&] { verifyGraph(p, torchOpTyper()); }, "parameters need concrete sizes");
}

TEST(Graph, IdsAreStableAndNamesUnique) {
  Graph g = smallGraph();
  EXPECT_EQ(g.nodes()[0].id, 0);
  EXPECT_EQ(g.nodes()[1].id, 1);
  EXPECT_EQ(g.nodes()[1].provenance, std::vector<NodeId>{1});
  g.nameValue(g.nodes()[0].outputs[0], "x");
  EXPECT_EQ(g.value(g.nodes()[0].outputs[0]).name, "x_1");
  EXPECT_THROW(g.node(7), VerifyError);
}

// Every op's derivative formula against central finite differences (float64, relative error
// below 1e-6), and both partitioners against the joint graph.
#include <gtest/gtest.h>

#include <set>

#include "core/autograd/derivatives.h"
#include "core/autograd/partition_comparison.h"
#include "core/frontend/model_loader.h"
#include "core/interp/interpreter.h"
#include "core/ops/registry.h"
#include "grad_check.h"
#include "op_cases.h"
#include "test_util.h"

using namespace fusebox;

namespace {

bool hasGradientPath(const test::OpCase& c) {
  if (!isDifferentiable(c.op)) return false;
  for (const auto& in : c.inputs)
    if (in.kind != test::InputGen::Kind::Int && in.kind != test::InputGen::Kind::Bool) return true;
  return false;
}

bool isBackwardOp(const std::string& op) { return op.find("_backward") != std::string::npos; }

}  // namespace

class OpGradient : public ::testing::TestWithParam<test::OpCase> {};

TEST_P(OpGradient, MatchesFiniteDifferencesAndPartitionsAgree) {
  const test::OpCase& c = GetParam();
  Graph g = test::opCaseGraph(c);
  if (!hasGradientPath(c) || isBackwardOp(c.op)) GTEST_SKIP() << c.op << " has no gradient to check here";
  JointOptions opts;
  opts.allFloatInputs = true;
  JointGraph joint = buildJointGraph(g, opts);
  std::vector<Tensor> in = test::opCaseInputs(c, g, 1);
  test::GradCheck r = test::checkGradients(g, joint, in, 5, 2);
  EXPECT_GT(r.targets, 0u);
  EXPECT_LT(r.worstRelError, 1e-6) << c.name << ": " << r.worstTarget;
  std::vector<Tensor> jin = test::jointInputs(joint, in, 5);
  for (Partitioner p : {Partitioner::Default, Partitioner::MinCut})
    EXPECT_LT(test::partitionMismatch(joint, partitionJointGraph(joint, p), jin), 1e-12) << c.name << " " << partitionerName(p);
}

INSTANTIATE_TEST_SUITE_P(Autograd, OpGradient, ::testing::ValuesIn(test::opCases()),
                         [](const auto& info) { return info.param.name; });

TEST(Autograd, EveryDifferentiableOpHasADerivativeFormula) {
  for (const OpSchema* s : OpRegistry::instance().torchOps()) {
    if (!isDifferentiable(s->name)) continue;
    if (isBackwardOp(s->name)) {
      EXPECT_EQ(findDerivative(s->name), nullptr) << s->name;  // second order is not supported, by design
      continue;
    }
    EXPECT_NE(findDerivative(s->name), nullptr) << "no derivative for " << s->name;
  }
}

TEST(Autograd, EveryOpHasACase) {
  std::set<std::string> covered;
  for (const test::OpCase& c : test::opCases()) covered.insert(c.op);
  for (const OpSchema* s : OpRegistry::instance().torchOps()) EXPECT_TRUE(covered.count(s->name)) << s->name;
}

TEST(Autograd, SecondOrderGivesAClearError) {
  const test::OpCase* c = nullptr;
  for (const test::OpCase& x : test::opCases())
    if (x.op == "conv2d_backward_input") c = &x;
  ASSERT_NE(c, nullptr);
  JointOptions opts;
  opts.allFloatInputs = true;
  test::expectThrowContaining<Error>([&] { buildJointGraph(test::opCaseGraph(*c), opts); },
                                     "op 'conv2d_backward_input' has no derivative formula");
}

// Finite differences cannot see the kink at zero; the product of the others is exact there: the
// nonzero elements' product at a slice's one zero, nothing where a slice has two.
TEST(Autograd, ProdGradientIsTheProductOfTheOthersAlsoAtZeros) {
  Graph g = test::traceSource("model p(x: f32[3, 3]) {\n  return prod(x, dim=[1])\n}\n");
  JointGraph joint = buildJointGraph(g, JointOptions{{"x"}, false});
  Tensor x(DType::F32, {3, 3}, {2, 3, 4, 0, 3, -5, 0, 0, 7});
  Tensor tangent(DType::F32, {3}, {1, 1, 1});
  std::vector<Tensor> out = interpret(joint.graph, {x, tangent});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].data, (std::vector<double>{24, 0, 0}));
  EXPECT_EQ(out[1].data, (std::vector<double>{12, 8, 6, -15, 0, 0, 0, 0, 0}));
}

TEST(Autograd, JointGraphShapeAndNames) {
  Graph g = test::traceSource(R"(
model j(x: f32[4, 3], y: i64[4] range(0, 2)) {
  param w: f32[2, 3] = randn(seed=1)
  param unused: f32[5] = ones
  return cross_entropy(linear(x, w), y)
})");
  JointGraph joint = buildJointGraph(g, {});
  const Graph& jg = joint.graph;
  EXPECT_EQ(joint.numForwardOutputs, 1u);
  ASSERT_EQ(joint.gradOf.size(), 2u);  // w and unused; x was not requested
  EXPECT_EQ(jg.inputs().back().role, InputRole::Tangent);
  EXPECT_EQ(jg.value(jg.inputs().back().value).name, "tangent_output");
  EXPECT_EQ(jg.value(jg.outputs()[1]).name, "grad_w");
  EXPECT_EQ(jg.type(jg.outputs()[2]).str(), "f32[5]");  // zeros for the unused param
  // Backward nodes carry the provenance and scope of the forward node they differentiate.
  for (const Node& n : jg.nodes()) {
    ASSERT_FALSE(n.provenance.empty());
    EXPECT_TRUE(g.hasNode(n.provenance.front()) || n.op == "full") << n.op;
  }
  JointGraph withX = buildJointGraph(g, JointOptions{{"x"}, false});
  EXPECT_EQ(withX.gradOf.size(), 3u);
  test::expectThrowContaining<Error>([&] { buildJointGraph(g, JointOptions{{"y"}, false}); }, "only floating-point inputs");
  test::expectThrowContaining<Error>([&] { buildJointGraph(g, JointOptions{{"q"}, false}); }, "has no input named 'q'");
  // No parameter and no input asked for: a clear error, not an empty backward graph.
  Graph noParams = test::traceSource("model n(x: f32[2, 3], y: i64[2] range(0, 3)) {\n  return cross_entropy(x, y)\n}\n");
  test::expectThrowContaining<Error>([&] { buildJointGraph(noParams, {}); }, "no floating-point parameter to train");
  EXPECT_EQ(buildJointGraph(noParams, JointOptions{{"x"}, false}).gradOf.size(), 1u);
}

TEST(Autograd, DeadCodeAndCommonSubexpressionsAreRemoved) {
  Graph g = test::traceSource(R"(
model c(x: f32[4]) {
  param w: f32[4] = randn(seed=1)
  a = exp(x * w)
  b = exp(x * w)
  dead = tanh(a)
  return a + b
})");
  JointGraph joint = buildJointGraph(g, {});
  int exps = 0, tanhs = 0;
  for (const Node& n : joint.graph.nodes()) exps += n.op == "exp", tanhs += n.op == "tanh";
  EXPECT_EQ(exps, 1);   // the duplicate exp(x * w) merged
  EXPECT_EQ(tanhs, 0);  // dead code dropped
}

// Min-cut on a cross-entropy over a large vocabulary: saving the logits (a graph input, cost
// once) and the row max / log-sum-exp (reductions 32000x smaller, kept in the forward) beats
// saving softmax - onehot (an intermediate whose users are all fusible: it would be written only
// to be saved, so it costs twice its bytes). The backward then reads the logits once.
TEST(Partitioner, CrossEntropySavesRowStatisticsNotTheSoftmax) {
  Graph g = trace(loadModel("xent_logits"), TraceOptions{{{"N", 8}}, false});
  Partition part = partitionJointGraph(buildJointGraph(g, {}), Partitioner::MinCut);
  int64_t logitsBytes = 8 * 32000 * 4;
  int64_t full = 0;
  for (const GraphInput& in : part.backward.inputs())
    if (in.role == InputRole::Saved && estimatedBytes(part.backward.type(in.value)) >= logitsBytes) {
      ++full;
      EXPECT_EQ(part.backward.value(in.value).name, "logits");
    }
  EXPECT_EQ(full, 1);
  EXPECT_LE(part.report.savedBytes, logitsBytes + 8 * 64);
  for (const Node& n : part.backward.nodes()) EXPECT_NE(n.op, "amax") << "the backward must not recompute the row max";
}

// Both partitioners side by side: default recomputes nothing; min-cut saves no more bytes, and
// what it recomputes is listed with its op; the verdict compares the two in one line.
TEST(Partitioner, SideBySideComparesSavedBytesAndRecomputedOps) {
  Graph g = trace(loadModel("mlp_gelu_ln"), TraceOptions{{{"N", 4}}, false});
  std::vector<PartitionerSide> sides = comparePartitioners(buildJointGraph(g, {}));
  ASSERT_EQ(sides.size(), 2u);
  EXPECT_EQ(sides[0].report.partitioner, Partitioner::Default);
  EXPECT_EQ(sides[0].report.recomputedOps, 0u);
  EXPECT_NE(sides[0].text.find("recomputed in the backward (in order):\n  none\n"), std::string::npos) << sides[0].text;
  EXPECT_LE(sides[1].report.savedBytes, sides[0].report.savedBytes);
  EXPECT_GT(sides[1].report.recomputedOps, 0u);
  EXPECT_NE(sides[1].text.find("  gelu -> "), std::string::npos) << sides[1].text;  // op, then the value it makes
  std::string verdict = partitionerVerdict(sides[0].report, sides[1].report);
  EXPECT_EQ(verdict.rfind("min-cut keeps", 0), 0u) << verdict;
  EXPECT_NE(verdict.find("by recomputing " + std::to_string(sides[1].report.recomputedOps) + " ops"), std::string::npos) << verdict;
  PartitionReport same = sides[0].report;
  EXPECT_EQ(partitionerVerdict(same, same).rfind("min-cut keeps as much for the backward as default", 0), 0u);
}

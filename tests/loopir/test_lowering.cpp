// Lowering to the loop IR computes what the prim graph computes (loop-IR reference evaluation
// against the graph interpreter), views become index arithmetic, and reductions are realized.
#include <gtest/gtest.h>

#include "core/autograd/joint_graph.h"
#include "core/autograd/partition.h"
#include "core/decompose/decompose.h"
#include "core/frontend/model_loader.h"
#include "core/interp/interpreter.h"
#include "core/loopir/loop_interp.h"
#include "core/loopir/lower.h"
#include "op_cases.h"
#include "test_util.h"

using namespace fusebox;

namespace {
void expectLoopsMatchGraph(const Graph& prims, const std::vector<Tensor>& in, double tol, const std::string& what) {
  LoopProgram p = lower(prims);
  std::vector<Tensor> want = interpret(prims, in);
  std::vector<Tensor> got = interpretLoops(p, in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    got[i].sizes = want[i].sizes;  // buffers are flat-compatible with the graph's shapes
    EXPECT_TRUE(allClose(got[i], want[i], tol, tol)) << what << " output " << i << " max abs diff "
                                                     << compareTensors(got[i], want[i]).maxAbs;
  }
}
}  // namespace

class OpLowering : public ::testing::TestWithParam<test::OpCase> {};

TEST_P(OpLowering, LoopProgramComputesTheOp) {
  const test::OpCase& c = GetParam();
  Graph g = decompose(test::opCaseGraph(c));
  expectLoopsMatchGraph(g, test::opCaseInputs(c, g, 4), 1e-9, c.name);
}

INSTANTIATE_TEST_SUITE_P(LoopIR, OpLowering, ::testing::ValuesIn(test::opCases()),
                         [](const auto& info) { return info.param.name; });

class ModelLowering : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelLowering, InferenceAndTraining) {
  TraceOptions small{{}, false};
  if (GetParam() == "gpt2_block") small.dims = {{"B", 1}, {"T", 8}};
  if (GetParam() == "layernorm_gelu") small.dims = {{"N", 8}, {"C", 128}};
  if (GetParam() == "mlp_gelu_ln" || GetParam() == "xent_logits") small.dims = {{"N", 4}};
  Graph g = trace(loadModel(GetParam()), small);
  expectLoopsMatchGraph(decompose(g), makeInputs(g, 1), 1e-4, GetParam() + " inference");
  JointGraph joint = buildJointGraph(g, {});
  Partition part = partitionJointGraph(joint, Partitioner::MinCut);
  Graph fwd = decompose(part.forward), bwd = decompose(part.backward);
  std::vector<Tensor> fin = makeInputs(g, 1);
  expectLoopsMatchGraph(fwd, fin, 1e-4, GetParam() + " forward");
  std::vector<Tensor> fout = interpret(fwd, fin);
  std::vector<Tensor> bin(fout.begin() + joint.numForwardOutputs, fout.end());
  for (const GraphInput& t : bwd.inputs())
    if (t.role == InputRole::Tangent) bin.push_back(makeTensor(bwd.type(t.value), InitSpec{}, 7, 1));
  expectLoopsMatchGraph(bwd, bin, 1e-4, GetParam() + " backward");
}

INSTANTIATE_TEST_SUITE_P(Zoo, ModelLowering,
                         ::testing::Values("mlp", "lenet", "resnet_block", "layernorm_gelu", "gpt2_block", "softmax_xent", "mlp_gelu_ln",
                                           "xent_logits"));

TEST(Lowering, ViewsAreIndexArithmeticAndPointwiseInlines) {
  Graph g = decompose(test::traceSource(R"(
model v(x: f32[4, 6]) {
  y = transpose(reshape(x, [2, 2, 6]), 1, 2)
  return exp(y) * 2.0 + 1.0
})"));
  LoopProgram p = lower(g);
  ASSERT_EQ(p.nodes.size(), 1u);  // reshape, transpose, exp, mul, add: one pointwise node
  const LoopNode& n = p.nodes[0];
  EXPECT_EQ(n.kind, LoopNode::Kind::Pointwise);
  std::vector<std::pair<std::string, IndexExpr>> loads;
  n.body->collectLoads(loads);
  ASSERT_EQ(loads.size(), 1u);
  EXPECT_EQ(loads[0].second.str(), "12*x0 + x1 + 6*x2");  // x[x0, x2, x1] of a [2, 2, 6] view
  // The ordered op list of the node: every prim folded in, producers before consumers.
  auto pos = [&](const char* op) { return std::find(n.prims.begin(), n.prims.end(), PrimUse{op}) - n.prims.begin(); };
  EXPECT_LT(pos("prims.reshape"), pos("prims.permute"));
  EXPECT_LT(pos("prims.permute"), pos("prims.exp"));
  EXPECT_LT(pos("prims.exp"), pos("prims.mul"));
  EXPECT_EQ(n.prims.back().op, "prims.add");
}

// A convolution's output through an exp, read by two consumers, is computed once and stored (its
// convolution's epilogue; inlined, EfficientNet's SiLU feeding its squeeze-excite mean and the
// product after it took two exps an element). An exp of an input, and a cheap value of the
// convolution (an add), read twice are inlined into both.
TEST(Lowering, ReusedExpOfAConvolutionIsRealized) {
  Graph g = decompose(test::traceSource(R"(
model r(x: f32[1, 3, 6, 5]) {
  param w: f32[4, 3, 3, 3] = randn(seed=1)
  y = conv2d(x, w, padding=[1])
  s = silu(y)
  c = y + 1.0
  e = exp(x)
  return mean(s, [2, 3]) + mean(c, [2, 3]), s * 3.0 + c * 2.0, sum(e, [1]) + sum(e, [2, 3, 1])
})"));
  LoopProgram p = lower(g);
  int exps = 0;  // nodes computing an exp: silu's, stored once, and exp(x) in each of its two sums
  for (const LoopNode& n : p.nodes)
    if (n.body && n.body->str().find("exp(") != std::string::npos) ++exps;
  EXPECT_EQ(exps, 3) << p.str();
  const LoopNode* out = p.producer(p.outputs[1]);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->body->str().find("exp("), std::string::npos) << out->body->str();  // reads silu's buffer
  expectLoopsMatchGraph(g, makeInputs(g, 5), 1e-9, "silu of a convolution reused");
}

TEST(Lowering, RejectsSymbolicShapes) {
  Graph g = decompose(test::traceSource("model s(x: f32[B, 4]) dims(B = 2) { return relu(x) }", TraceOptions{{}, true}));
  test::expectThrowContaining<Error>([&] { lower(g); }, "lowering needs concrete shapes");
}

// A gather of a pointwise value reads the value's inputs indirectly instead of realizing it:
// cross-entropy picks one log-probability per row without writing the [N, V] log-softmax.
TEST(Lowering, GatherOfAPointwiseSourceStaysInlined) {
  Graph g = decompose(trace(loadModel("xent_logits"), TraceOptions{{{"N", 6}}, false}));
  LoopProgram lp = lower(g);
  for (const Buffer& b : lp.buffers) {
    if (b.kind != Buffer::Kind::Input) {
      EXPECT_LE(b.layout.numel(), 6) << b.name << " is realized at full size";
    }
  }
  bool indirect = false;
  for (const LoopNode& n : lp.nodes)
    if (n.body && n.body->str().find("load(logits") != std::string::npos && n.numel() * n.reductionNumel() == 6) indirect = true;
  EXPECT_TRUE(indirect) << lp.str();
  expectLoopsMatchGraph(g, makeInputs(g, 3), 1e-5, "xent_logits gather");
}

// Every built-in model: parsed, traced (concrete and symbolic), verified and run in the
// interpreter, native precision against the float64 oracle.
#include <gtest/gtest.h>

#include <cmath>

#include "core/autograd/joint_graph.h"
#include "core/autograd/partition.h"
#include "core/decompose/decompose.h"
#include "core/frontend/model_loader.h"
#include "core/interp/interpreter.h"
#include "core/ir/verifier.h"
#include "core/ops/registry.h"
#include "core/trace/trace.h"
#include "grad_check.h"

using namespace fusebox;

class ZooModel : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooModel, TracesVerifiesAndRunsLikeTheFloat64Oracle) {
  ModelDef m = loadModel(GetParam());
  EXPECT_FALSE(m.description.empty());
  Graph g = trace(m);
  EXPECT_NO_THROW(verifyGraph(g, torchOpTyper()));
  std::vector<Tensor> in = makeInputs(g, 3);
  std::vector<Tensor> native = interpret(g, in, Precision::Native);
  std::vector<Tensor> exact = interpret(g, in, Precision::Float64);
  ASSERT_EQ(native.size(), g.outputs().size());
  for (size_t i = 0; i < native.size(); ++i) {
    bool anyNonZero = false;
    for (double v : native[i].data) {
      ASSERT_TRUE(std::isfinite(v)) << GetParam() << " output " << i;
      anyNonZero |= v != 0.0;
    }
    EXPECT_TRUE(anyNonZero) << GetParam();
    EXPECT_TRUE(allClose(native[i], exact[i], 1e-3, 1e-5)) << GetParam() << ": max abs diff "
                                                           << compareTensors(native[i], exact[i]).maxAbs;
  }
  // Deterministic for a seed, different for another.
  EXPECT_EQ(interpret(g, in)[0].data, native[0].data);
  EXPECT_NE(interpret(g, makeInputs(g, 4))[0].data, native[0].data);
}

TEST_P(ZooModel, TracesSymbolically) {
  if (GetParam() == "xent_logits") GTEST_SKIP() << "its only dim sizes a parameter, which must be concrete";
  ModelDef m = loadModel(GetParam());
  TraceOptions opts;
  opts.symbolic = true;
  // Dims that size parameters (layernorm_gelu's C) must stay bound; batch-like dims go symbolic.
  for (const auto& [sym, size] : m.dims)
    if (sym != "B" && sym != "N" && sym != "T") opts.dims[sym] = size;
  Graph g = trace(m, opts);
  EXPECT_NO_THROW(verifyGraph(g, torchOpTyper()));
  bool symbolicSomewhere = false;
  for (const Value& v : g.values()) symbolicSomewhere |= !isConcrete(v.type.shape);
  EXPECT_TRUE(symbolicSomewhere) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooModel,
                         ::testing::Values("mlp", "lenet", "resnet_block", "layernorm_gelu", "gpt2_block", "softmax_xent", "mlp_gelu_ln",
                                           "xent_logits"));

TEST(Zoo, ListsEightModelsAndTheDemo) {
  EXPECT_EQ(builtinModels().size(), 8u);
  EXPECT_NE(findBuiltinModel(demoModelName()), nullptr);
}

// The causal mask: changing the last time step leaves every earlier position's output alone.
TEST(Zoo, Gpt2BlockAttentionIsCausal) {
  Graph g = trace(loadModel("gpt2_block"), TraceOptions{{{"B", 1}, {"T", 6}}, false});
  std::vector<Tensor> in = makeInputs(g, 1);
  Tensor before = interpret(g, in, Precision::Float64)[0];
  for (int64_t c = 0; c < 768; ++c) in[0].data[5 * 768 + c] += 1.0;
  Tensor after = interpret(g, in, Precision::Float64)[0];
  for (int64_t i = 0; i < 5 * 768; ++i) ASSERT_EQ(before.data[i], after.data[i]) << "position " << i / 768;
  double lastChange = 0;
  for (int64_t c = 0; c < 768; ++c) lastChange += std::fabs(before.data[5 * 768 + c] - after.data[5 * 768 + c]);
  EXPECT_GT(lastChange, 1.0);
}

// Softmax cross-entropy against the textbook formula on the model's own inputs.
TEST(Zoo, SoftmaxXentLossMatchesFormula) {
  Graph g = trace(loadModel("softmax_xent"), TraceOptions{{{"N", 4}}, false});
  std::vector<Tensor> in = makeInputs(g, 9);
  double loss = interpret(g, in, Precision::Float64)[0].data[0];
  const Tensor &x = in[0], &y = in[1], &w = in[2], &b = in[3];
  double total = 0;
  for (int n = 0; n < 4; ++n) {
    std::vector<double> logits(1000);
    for (int k = 0; k < 1000; ++k) {
      logits[k] = b.data[k];
      for (int c = 0; c < 256; ++c) logits[k] += x.data[n * 256 + c] * w.data[k * 256 + c];
    }
    double sum = 0;
    for (double l : logits) sum += std::exp(l);
    total += std::log(sum) - logits[static_cast<int>(y.data[n])];
  }
  EXPECT_NEAR(loss, total / 4, 1e-9);
  EXPECT_GT(loss, 5.0);  // near log(1000) for unit-variance logits
  EXPECT_LT(loss, 10.0);
}

// Training: the joint graph of every model against finite differences, both partitioners
// against the joint graph, and the decomposed forward/backward graphs against the partitioned ones.
class ZooTraining : public ::testing::TestWithParam<std::string> {};

namespace {
TraceOptions smallDims(const std::string& model) {
  if (model == "gpt2_block") return TraceOptions{{{"B", 1}, {"T", 4}}, false};
  if (model == "layernorm_gelu") return TraceOptions{{{"N", 4}, {"C", 64}}, false};
  if (model == "softmax_xent") return TraceOptions{{{"N", 8}}, false};
  if (model == "mlp_gelu_ln" || model == "xent_logits") return TraceOptions{{{"N", 2}}, false};
  return TraceOptions{{{"B", 2}}, false};
}
}  // namespace

TEST_P(ZooTraining, GradientsMatchFiniteDifferences) {
  Graph g = trace(loadModel(GetParam()), smallDims(GetParam()));
  JointGraph joint = buildJointGraph(g, {});
  std::vector<Tensor> in = makeInputs(g, 1);
  test::GradCheck r = test::checkGradients(g, joint, in, 2);
  size_t params = 0;
  for (const GraphInput& i : g.inputs()) params += i.role == InputRole::Param;
  EXPECT_EQ(r.targets, params);
  EXPECT_LT(r.worstRelError, 1e-6) << GetParam() << ": " << r.worstTarget;
}

TEST_P(ZooTraining, PartitionsAndPrimGraphsComputeTheJointFunction) {
  Graph g = trace(loadModel(GetParam()), smallDims(GetParam()));
  JointGraph joint = buildJointGraph(g, {});
  std::vector<Tensor> jin = test::jointInputs(joint, makeInputs(g, 1), 4);
  for (Partitioner p : {Partitioner::Default, Partitioner::MinCut}) {
    Partition part = partitionJointGraph(joint, p);
    EXPECT_LT(test::partitionMismatch(joint, part, jin), 1e-12) << partitionerName(p);
    // Decomposed forward and backward graphs compute what the partitioned graphs compute.
    Partition primPart{decompose(part.forward), decompose(part.backward), part.report};
    EXPECT_LT(test::partitionMismatch(joint, primPart, jin), 1e-9) << partitionerName(p) << " prims";
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooTraining,
                         ::testing::Values("mlp", "lenet", "resnet_block", "layernorm_gelu", "gpt2_block", "softmax_xent", "mlp_gelu_ln",
                                           "xent_logits"));

// The min-cut partitioner must not save more than the default one; on these two it saves less.
TEST(Zoo, MinCutSavesNoMoreThanDefault) {
  for (const char* model : {"gpt2_block", "mlp"}) {
    Graph g = trace(loadModel(model));
    JointGraph joint = buildJointGraph(g, {});
    PartitionReport def = partitionJointGraph(joint, Partitioner::Default).report;
    PartitionReport cut = partitionJointGraph(joint, Partitioner::MinCut).report;
    EXPECT_LE(cut.savedBytes, def.savedBytes) << model;
    EXPECT_EQ(def.recomputedOps, 0u) << model;
    std::printf("%s: default saves %zu tensors / %lld bytes; mincut saves %zu / %lld and recomputes %zu ops\n", model,
                def.saved.size(), static_cast<long long>(def.savedBytes), cut.saved.size(),
                static_cast<long long>(cut.savedBytes), cut.recomputedOps);
  }
}

TEST_P(ZooModel, DecomposesToPrimsComputingTheSameFunction) {
  Graph g = trace(loadModel(GetParam()));
  Graph p = decompose(g);
  std::vector<Tensor> in = makeInputs(g, 5);
  std::vector<Tensor> a = interpret(g, in, Precision::Float64), b = interpret(p, in, Precision::Float64);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(allClose(b[i], a[i], 1e-10, 1e-10)) << GetParam();
  std::vector<Tensor> a32 = interpret(g, in), b32 = interpret(p, in);
  for (size_t i = 0; i < a32.size(); ++i) EXPECT_TRUE(allClose(b32[i], a32[i], 1e-4, 1e-5)) << GetParam();
}

// The fusion scheduler: decisions for known patterns, their logged reasons, the fusion switch,
// and the memory plan.
#include <gtest/gtest.h>

#include "core/decompose/decompose.h"
#include "core/frontend/model_loader.h"
#include "core/loopir/lower.h"
#include "core/schedule/schedule.h"
#include "core/schedule/schedule_dot.h"
#include "scale_models.h"
#include "test_util.h"

using namespace fusebox;

namespace {
LoopProgram loopsOf(const std::string& model, TraceOptions opts = {}) { return lower(decompose(trace(loadModel(model), opts))); }
LoopProgram loopsOfSource(const std::string& src) { return lower(decompose(test::traceSource(src))); }
bool anyDecision(const Schedule& s, bool fused, const std::string& reasonPart) {
  for (const FusionDecision& d : s.decisions)
    if (d.fused == fused && d.reason.find(reasonPart) != std::string::npos) return true;
  return false;
}
}  // namespace

// LayerNorm over the last dim is two row reductions (mean, then variance around it) and a
// normalize-scale-shift pass; GELU and the residual are pointwise on the same [N, C] grid. All of
// it reads x row by row, so everything fuses into ONE kernel with three loops over a row: sum,
// sum of squared deviations, then the epilogue (Inductor also emits one kernel here).
TEST(Schedule, LayerNormGeluIsOneKernelWithThreeLoops) {
  LoopProgram p = loopsOf("layernorm_gelu");
  Schedule s = schedule(p);
  ASSERT_EQ(s.kernels.size(), 1u) << s.str();
  const Kernel& k = s.kernels[0];
  EXPECT_EQ(k.M, 256);
  EXPECT_EQ(k.K, 1024);
  EXPECT_EQ(k.segments.size(), 3u);
  EXPECT_EQ(k.storedBuffers.size(), 1u);  // only the output goes to memory
  EXPECT_TRUE(anyDecision(s, true, "saved"));
  EXPECT_EQ(s.memory.peakIntermediateBytes, 0);
}

TEST(Schedule, FusionOffGivesOneKernelPerNode) {
  LoopProgram p = loopsOf("layernorm_gelu");
  ScheduleConfig off;
  off.fusion = false;
  Schedule s = schedule(p, off);
  EXPECT_EQ(s.kernels.size(), p.nodes.size());
  EXPECT_TRUE(s.decisions.empty());
  EXPECT_GT(s.memory.peakIntermediateBytes, 0);
}

TEST(Schedule, NoFusionAcrossExternsAndReasonsAreLogged) {
  Schedule s = schedule(loopsOf("mlp"));
  EXPECT_TRUE(anyDecision(s, false, "no fusion across the extern prims.matmul"));
  for (const FusionDecision& d : s.decisions) {
    EXPECT_FALSE(d.reason.empty());
    EXPECT_TRUE(d.kind == "vertical" || d.kind == "horizontal");
  }
}

// A conv2d forward absorbs bias + residual + ReLU/ReLU6 as its epilogue: one extern kernel that
// stores only the result. The residual added before the bias is another order of additions (not
// the epilogue's), and a conv output read by two kernels must be stored: both stay separate.
const Kernel* externWithEpilogue(const Schedule& s, const std::string& output) {
  for (const Kernel& k : s.kernels)
    if (k.isExtern && k.epilogue && k.epilogue->output == output) return &k;
  return nullptr;
}

// SiLU as decomposed, v * (1 / (exp(-v) + 1)), is an epilogue activation; a product with the
// sigmoid of another value is not.
TEST(Schedule, ConvAbsorbsSiluAsItsEpilogue) {
  LoopProgram p = loopsOfSource(R"(
model t(x: f32[2, 3, 9, 7], r: f32[2, 4, 9, 7]) {
  param w: f32[4, 3, 3, 3] = randn(seed=1)
  param b: f32[4] = randn(seed=2)
  param w2: f32[4, 3, 3, 3] = randn(seed=3)
  y = silu(conv2d(x, w, b, padding=[1]) + r)
  c = conv2d(x, w2, padding=[1])
  z = c * sigmoid(c + r)
  return y, z
})");
  Schedule s = schedule(p);
  const Kernel* k = externWithEpilogue(s, p.outputs[0]);
  ASSERT_NE(k, nullptr) << s.str();
  EXPECT_TRUE(k->epilogue->silu && !k->epilogue->lower && !k->epilogue->upper);
  EXPECT_FALSE(k->epilogue->bias.empty());
  EXPECT_EQ(k->epilogue->residual, "r");
  EXPECT_EQ(k->epilogue->str().find("silu") != std::string::npos, true);
  EXPECT_EQ(externWithEpilogue(s, p.outputs[1]), nullptr) << s.str();
  EXPECT_TRUE(anyDecision(s, false, "more than a bias, a residual and a clamp or SiLU")) << s.str();
}

TEST(Schedule, ConvAbsorbsBiasResidualAndClampAsItsEpilogue) {
  LoopProgram p = loopsOfSource(R"(
model t(x: f32[2, 3, 9, 7], r: f32[2, 4, 9, 7]) {
  param w: f32[4, 3, 3, 3] = randn(seed=1)
  param b: f32[4] = randn(seed=2)
  param w2: f32[4, 3, 3, 3] = randn(seed=4)
  param w3: f32[4, 3, 3, 3] = randn(seed=5)
  param w4: f32[4, 3, 3, 3] = randn(seed=6)
  param bl: f32[4, 1, 1] = randn(seed=3)
  y = relu(conv2d(x, w, b, padding=[1]) + r)
  six = minimum(maximum(conv2d(x, w2, b, padding=[1]), 0), 6)
  late = conv2d(x, w3, padding=[1]) + r + bl
  raw = conv2d(x, w4, b, padding=[1])
  return y, six, late, raw * raw, relu(raw)
})");
  Schedule s = schedule(p);
  const Kernel* k = externWithEpilogue(s, p.outputs[0]);
  ASSERT_NE(k, nullptr) << s.str();
  EXPECT_FALSE(k->epilogue->bias.empty());
  EXPECT_EQ(k->epilogue->residual, "r");
  EXPECT_TRUE(k->epilogue->lower && !k->epilogue->upper && k->epilogue->lo == 0);
  EXPECT_EQ(k->storedBuffers, std::vector<std::string>{p.outputs[0]});
  EXPECT_EQ(k->items.size(), 2u) << s.str();  // the conv and its pointwise node (+ b, + r, max 0)
  const Kernel* six = externWithEpilogue(s, p.outputs[1]);
  ASSERT_NE(six, nullptr) << s.str();
  EXPECT_TRUE(six->epilogue->lower && six->epilogue->upper && six->epilogue->hi == 6 && six->epilogue->residual.empty());
  EXPECT_TRUE(anyDecision(s, true, "fused into the convolution's epilogue"));
  // late: (conv + r) + bias[o] is not (conv + bias) + r in f32; the conv takes only "+ r".
  for (const Kernel& kk : s.kernels)
    if (kk.epilogue && kk.epilogue->output == p.outputs[2]) ADD_FAILURE() << "reordered additions: " << kk.epilogue->str();
  EXPECT_TRUE(anyDecision(s, false, "more than a bias, a residual and a clamp")) << s.str();
  // raw feeds two kernels (fused together): the conv's epilogue would have two results to store.
  EXPECT_TRUE(anyDecision(s, false, "are both read after the convolution's epilogue")) << s.str();

  ScheduleConfig off;
  off.convEpilogues = false;
  Schedule plain = schedule(p, off);
  for (const Kernel& kk : plain.kernels) EXPECT_FALSE(kk.epilogue.has_value());
  EXPECT_TRUE(anyDecision(plain, false, "no fusion across the extern prims.conv2d"));
  // Without epilogues the convolution's raw output is stored and read back; with them it is not.
  auto stores = [](const Schedule& sch, const std::string& buffer) {
    for (const Kernel& kk : sch.kernels)
      for (const std::string& b : kk.storedBuffers)
        if (b == buffer) return true;
    return false;
  };
  const std::string convOut = p.nodes[k->items[0].node].output;
  EXPECT_TRUE(stores(plain, convOut));
  EXPECT_FALSE(stores(s, convOut));
}

// squeezenet's fire module: two convolutions (bias and ReLU after each) concatenated along the
// channels at batch 1. Each convolution stores its slice of the concatenation as its epilogue, at
// its offset; the concatenation has no kernel, and its buffer is planned once. At batch 2 the
// slices are not contiguous and the concatenation stays a kernel.
TEST(Schedule, ConvolutionsWriteTheirSlicesOfAConcatenationInPlace) {
  const char* fire = R"(
model t(x: f32[B, 4, 7, 11]) dims(B = 1) {
  param w1: f32[5, 4, 1, 1] = randn(seed=1)
  param b1: f32[5] = randn(seed=2)
  param w3: f32[3, 4, 3, 3] = randn(seed=3)
  param b3: f32[3] = randn(seed=4)
  return cat([relu(conv2d(x, w1, b1)), relu(conv2d(x, w3, b3, padding=[1]))], dim=1)
})";
  LoopProgram p = loopsOfSource(fire);
  Schedule s = schedule(p);
  const std::string out = p.outputs[0];
  std::vector<const Kernel*> writers;
  for (const Kernel& k : s.kernels)
    if (std::find(k.storedBuffers.begin(), k.storedBuffers.end(), out) != k.storedBuffers.end()) writers.push_back(&k);
  ASSERT_EQ(writers.size(), 2u) << s.str();
  for (const Kernel* k : writers) {
    ASSERT_TRUE(k->isExtern && k->epilogue) << s.str();
    EXPECT_EQ(k->epilogue->output, out);
    EXPECT_FALSE(k->epilogue->bias.empty());
    EXPECT_TRUE(k->epilogue->lower);
    EXPECT_EQ(k->items.size(), 2u);
    EXPECT_EQ(k->bytesWritten, p.buffer(p.nodes[k->items[0].node].output).bytes()) << "its slice, not the whole";
  }
  EXPECT_EQ(writers[0]->epilogue->outputOffset, 0);
  EXPECT_EQ(writers[1]->epilogue->outputOffset, 5 * 7 * 11);
  EXPECT_EQ(s.kernels.size(), 2u) << "no kernel copies the parts together\n" << s.str();
  EXPECT_TRUE(anyDecision(s, true, "in place of the concatenation's copy")) << s.str();
  // The fused loop-IR graph draws the concatenation once, outside both kernels' frames.
  const std::string dot = printScheduleDot(p, s);
  const int concat = writers[0]->items[1].node;
  const std::string line = "l" + std::to_string(concat) + " [label=";
  ASSERT_NE(dot.find(line), std::string::npos) << dot;
  EXPECT_EQ(dot.find(line, dot.find(line) + 1), std::string::npos) << "drawn once\n" << dot;
  EXPECT_NE(dot.find("written in place by " + writers[0]->name + " " + writers[1]->name), std::string::npos) << dot;
  EXPECT_EQ(dot.rfind("\n    " + line), std::string::npos) << "not inside a kernel's frame\n" << dot;

  ScheduleConfig off;
  off.concatInPlace = false;
  Schedule copied = schedule(p, off);
  EXPECT_EQ(copied.kernels.size(), 3u) << copied.str();
  EXPECT_EQ(s.memory.totalIntermediateBytes, 0) << "the concatenation is the program's output";

  TraceOptions two;
  two.dims["B"] = 2;
  LoopProgram p2 = lower(decompose(test::traceSource(fire, two)));
  Schedule s2 = schedule(p2);
  for (const Kernel& k : s2.kernels) EXPECT_FALSE(k.epilogue && k.epilogue->concat >= 0) << s2.str();
  EXPECT_EQ(s2.kernels.size(), 3u) << s2.str();
  EXPECT_TRUE(anyDecision(s2, false, "not written in place of the concatenation: its slices are not contiguous")) << s2.str();
}

TEST(Schedule, ReadsAtAnotherPointDoNotFuse) {
  // e is realized (a matmul reads it) and computed row by row; the column sum reads it column
  // by column: not the point being computed, so it cannot stay in a register.
  Schedule s = schedule(loopsOfSource(R"(
model t(x: f32[64, 32]) {
  param w: f32[32, 8] = randn(seed=1)
  e = exp(x)
  return matmul(e, w), sum(e, [0])
})"));
  EXPECT_EQ(s.kernels.size(), 3u) << s.str();
  EXPECT_TRUE(anyDecision(s, false, "incompatible index")) << s.str();
}

TEST(Schedule, SiblingsReadingTheSamePointsFuseHorizontally) {
  // The column sum and the transposed copy both visit x column-major: one kernel.
  Schedule s = schedule(loopsOfSource(R"(
model t(x: f32[64, 32]) {
  e = exp(x)
  return sum(e, [0]), transpose(e, 0, 1) * 2.0
})"));
  EXPECT_EQ(s.kernels.size(), 1u) << s.str();
  EXPECT_TRUE(anyDecision(s, true, "saved"));
}

TEST(Schedule, SiblingsReadingOtherPointsStayApart) {
  // GELU of x and GELU of its transpose (ConvNeXt's backward recomputes both): x is read at
  // another point by each, so one kernel would read it twice anyway and scramble one side's
  // indices. Both also read the scalar c at [0], which is no reason to fuse.
  Schedule s = schedule(loopsOfSource(R"(
model t(x: f32[24, 56, 40], c: f32[]) {
  return exp(x) * c, exp(permute(x, [0, 2, 1])) * c
})"));
  EXPECT_EQ(s.kernels.size(), 2u) << s.str();
  EXPECT_TRUE(anyDecision(s, false, "no read is shared")) << s.str();
}

TEST(Schedule, SoftmaxRowsFuseIntoOneKernel) {
  Schedule s = schedule(loopsOfSource("model s(x: f32[16, 1000]) { return softmax(x, -1) }"));
  ASSERT_EQ(s.kernels.size(), 1u) << s.str();
  EXPECT_EQ(s.kernels[0].segments.size(), 3u);  // max, sum of exp, normalize
}

TEST(Schedule, LargePointwiseWorkIsNotSerializedIntoAFewRowReduction) {
  // mean over everything (one row) next to a 256K-element pointwise: fusing would put all of
  // it on one block / thread.
  Schedule s = schedule(loopsOfSource(R"(
model t(x: f32[512, 512]) {
  e = exp(x)
  return e * 2.0, mean(e)
})"));
  EXPECT_TRUE(anyDecision(s, false, "would serialize")) << s.str();
}

TEST(Schedule, KernelSizeLimitIsRespected) {
  ScheduleConfig tiny;
  tiny.maxNodesPerKernel = 2;
  Schedule s = schedule(loopsOf("layernorm_gelu"), tiny);
  for (const Kernel& k : s.kernels) EXPECT_LE(k.items.size(), 2u);
  EXPECT_TRUE(anyDecision(s, false, "kernel size limit"));
}

TEST(Schedule, MemoryPlanReusesDeadBuffers) {
  Schedule s = schedule(loopsOf("lenet"));
  EXPECT_LE(s.memory.peakIntermediateBytes, s.memory.totalIntermediateBytes);
  ScheduleConfig off;
  off.fusion = false;
  Schedule unfused = schedule(loopsOf("gpt2_block"), off);
  EXPECT_FALSE(unfused.memory.reuse.empty());
  EXPECT_LT(unfused.memory.peakIntermediateBytes, unfused.memory.totalIntermediateBytes);
  // the plan kernel by kernel: what is in use fits in what is allocated, which only grows, to the peak
  for (const Schedule* plan : {&s, &unfused}) {
    const MemoryPlan& m = plan->memory;
    ASSERT_EQ(m.liveBytes.size(), plan->kernels.size());
    ASSERT_EQ(m.allocatedBytes.size(), plan->kernels.size());
    for (size_t i = 0; i < m.liveBytes.size(); ++i) {
      EXPECT_LE(m.liveBytes[i], m.allocatedBytes[i]) << i;
      if (i) {
        EXPECT_GE(m.allocatedBytes[i], m.allocatedBytes[i - 1]) << i;
      }
    }
    EXPECT_EQ(m.allocatedBytes.back(), m.peakIntermediateBytes);
    EXPECT_GT(*std::max_element(m.liveBytes.begin(), m.liveBytes.end()), 0);
  }
  EXPECT_LT(*std::max_element(unfused.memory.liveBytes.begin(), unfused.memory.liveBytes.end()), unfused.memory.totalIntermediateBytes)
      << "buffers die along the way";
}

// Bounded work: a 1,000-op DAG whose paths rejoin schedules with a decision per producer/consumer
// or sibling pair (linear in the edges, not in pairs of nodes), every node in one kernel, and the
// same schedule as a second run (the rejection cache and the bounded cycle search are deterministic).
TEST(Schedule, LargeDagDecisionsAreLinearInTheEdges) {
  LoopProgram p = loopsOfSource(test::dagSource(1000));
  Schedule s = schedule(p);
  size_t edges = 0;
  for (const LoopNode& n : p.nodes) edges += n.reads().size();
  EXPECT_LE(s.decisions.size(), 2 * edges);
  std::vector<int> seen(p.nodes.size(), 0);
  for (const Kernel& k : s.kernels)
    for (const KernelItem& it : k.items) ++seen[it.node];
  for (int c : seen) EXPECT_EQ(c, 1);
  EXPECT_EQ(schedule(p).str(), s.str());
}

// The fusion scheduler: decisions for known patterns, their logged reasons, the fusion switch,
// and the memory plan.
#include <gtest/gtest.h>

#include "core/decompose/decompose.h"
#include "core/frontend/model_loader.h"
#include "core/loopir/lower.h"
#include "core/schedule/schedule.h"
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

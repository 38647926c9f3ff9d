// Which buffers the CPU code keeps channel-blocked (core/codegen/cpu/channel_blocking.h), and
// what the generated module says of them. The numbers themselves: tests/regressions/
// channel_blocked_chains.fbx against the interpreter.
#include <gtest/gtest.h>

#include "core/codegen/cpu/channel_blocking.h"
#include "core/codegen/cpu/cpp_codegen.h"
#include "core/decompose/decompose.h"
#include "core/loopir/lower.h"
#include "core/ops/extern_prims.h"
#include "core/schedule/schedule.h"
#include "test_util.h"

using namespace fusebox;

namespace {

// An inverted residual block (MobileNetV2's): 1x1 expand with ReLU6, depthwise 3x3 with ReLU6,
// 1x1 project plus a residual that another 1x1 writes, then a 1x1 whose output a sum reads.
const char* kBlock = R"(
model t(x: f32[1, 24, 9, 7]) {
  param we: f32[40, 24, 1, 1] = randn(seed=1)
  param wd: f32[40, 1, 3, 3] = randn(seed=2)
  param wp: f32[24, 40, 1, 1] = randn(seed=3)
  param wr: f32[24, 24, 1, 1] = randn(seed=4)
  param wo: f32[20, 24, 1, 1] = randn(seed=5)
  e = minimum(maximum(conv2d(x, we), 0), 6)
  d = minimum(maximum(conv2d(e, wd, padding=[1], groups=40), 0), 6)
  p = conv2d(e * 0.0 + d, wp) + conv2d(x, wr)
  return sum(conv2d(p, wo))
})";

// The output buffer of each conv2d forward kernel, in execution order.
std::vector<std::string> convOutputs(const LoopProgram& p, const Schedule& s) {
  std::vector<std::string> out;
  for (const Kernel& k : s.kernels)
    if (k.isExtern && p.nodes[k.items[0].node].externOp == ExternOp::Conv2d)
      out.push_back(k.epilogue ? k.epilogue->output : p.nodes[k.items[0].node].output);
  return out;
}

LoopProgram loopsOf(const std::string& src) { return lower(decompose(test::traceSource(src))); }

}  // namespace

TEST(ChannelBlocking, AnInvertedResidualBlockStaysBlockedFromExpandToProject) {
  std::string src = kBlock;
  src.replace(src.find("e * 0.0 + d"), 11, "d");
  LoopProgram p = loopsOf(src);
  Schedule s = schedule(p);
  std::vector<std::string> outs = convOutputs(p, s);
  ASSERT_EQ(outs.size(), 5u) << s.str();  // expand, depthwise, residual, project, last
  std::set<std::string> blocked = planChannelBlocking(p, s);
  EXPECT_EQ(blocked, (std::set<std::string>{outs[0], outs[1], outs[2], outs[3]})) << s.str();
  EXPECT_FALSE(blocked.count(outs[4])) << "a sum reads it";
  EXPECT_FALSE(blocked.count(p.inputs[0])) << "a program input";

  // 24 channels pad to 32; 40 to 48.
  EXPECT_EQ(blockedChannelBytes(p.buffer(outs[3])), 32 * 9 * 7 * 4);
  EXPECT_EQ(blockedChannelBytes(p.buffer(outs[0])), 48 * 9 * 7 * 4);
  CppModule m = generateCpp(p, s);
  EXPECT_EQ(m.paddedBytes.size(), 4u);
  EXPECT_EQ(m.paddedBytes.at(outs[3]), 32 * 9 * 7 * 4);
  size_t calls = 0;
  for (size_t at = m.source.find("fb_conv_blocked(rt"); at != std::string::npos; at = m.source.find("fb_conv_blocked(rt", at + 1)) ++calls;
  EXPECT_EQ(calls, 5u) << "the last 1x1 reads blocked, writes planes";
}

TEST(ChannelBlocking, EitherSideOfAConvolutionMayBePlanes) {
  // The depthwise output is read by a sum too (a squeeze-excitation's pool): planes, while its
  // image, the expand's output, stays blocked; the project reads planes and writes blocked.
  std::string src = kBlock;
  src.replace(src.find("e * 0.0 + d"), 11, "d");
  src.replace(src.find("return sum(conv2d(p, wo))"), 25, "return sum(conv2d(p, wo)) + sum(d)");
  LoopProgram p = loopsOf(src);
  Schedule s = schedule(p);
  std::vector<std::string> outs = convOutputs(p, s);
  ASSERT_EQ(outs.size(), 5u) << s.str();
  std::set<std::string> blocked = planChannelBlocking(p, s);
  EXPECT_TRUE(blocked.count(outs[0])) << s.str();
  EXPECT_FALSE(blocked.count(outs[1])) << s.str();
  EXPECT_TRUE(blocked.count(outs[3])) << s.str();

  // A buffer read by a pointwise kernel as well (e * 0.0 + d reads the expand's output): planes.
  LoopProgram q = loopsOf(kBlock);
  Schedule t = schedule(q);
  std::vector<std::string> qouts = convOutputs(q, t);
  ASSERT_EQ(qouts.size(), 5u) << t.str();
  EXPECT_FALSE(planChannelBlocking(q, t).count(qouts[0])) << t.str();
}

TEST(ChannelBlocking, ATrainingGraphAndAnUnfusedScheduleKeepPlanes) {
  std::string src = kBlock;
  src.replace(src.find("e * 0.0 + d"), 11, "d");
  LoopProgram p = loopsOf(src);
  Schedule s = schedule(p);
  s.trainingGraph = true;
  EXPECT_TRUE(planChannelBlocking(p, s).empty());
  ScheduleConfig off;
  off.fusion = false;  // no epilogues: a bias or clamp kernel reads every convolution's output
  Schedule unfused = schedule(p, off);
  std::set<std::string> blocked = planChannelBlocking(p, unfused);
  std::vector<std::string> outs = convOutputs(p, unfused);
  ASSERT_EQ(outs.size(), 5u);
  EXPECT_FALSE(blocked.count(outs[0])) << "read by the clamp's kernel";
  EXPECT_FALSE(blocked.count(outs[3]));
}

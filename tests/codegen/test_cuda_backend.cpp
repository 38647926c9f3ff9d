// The CUDA backend: CUDA C++ for every model compiles with NVRTC to PTX with the expected entry
// points (runs in CI, no GPU needed); on a machine with a GPU, every model computes what the
// interpreter computes (skipped cleanly elsewhere).
#include <gtest/gtest.h>

#include "core/codegen/cuda/cuda_codegen.h"
#include "core/codegen/cuda/nvrtc_compiler.h"
#include "core/frontend/model_loader.h"
#include "core/runtime/cuda_executable.h"
#include "core/runtime/model_runner.h"
#include "test_util.h"

using namespace fusebox;

class CudaBackend : public ::testing::TestWithParam<std::tuple<std::string, bool>> {};

TEST_P(CudaBackend, CompilesToPtxWithEveryEntryPoint) {
  if (!nvrtcAvailable()) GTEST_SKIP() << "built without the CUDA toolkit";
  auto [model, train] = GetParam();
  PipelineConfig cfg;
  cfg.train = train;
  Pipeline p(loadModel(model), cfg);
  p.runUntil(Stage::Schedule);
  for (size_t i = 0; i < p.loops().size(); ++i) {
    CudaModule m = generateCuda(p.loops()[i], p.schedules()[i]);
    auto ptx = compileCudaModule(m.source, 90);
    ASSERT_FALSE(ptx->ptx.empty());
    EXPECT_NE(ptx->ptx.find(".target sm_90"), std::string::npos);
    for (const std::string& e : m.entryPoints) EXPECT_NE(ptx->ptx.find(".entry " + e + "("), std::string::npos) << e;
    EXPECT_EQ(m.launches.size(), p.schedules()[i].kernels.size());
  }
}

TEST_P(CudaBackend, RunsLikeTheInterpreterOnTheGpu) {
  std::string why;
  if (!nvrtcAvailable() || !cudaDeviceAvailable(&why)) GTEST_SKIP() << "no GPU here: " << why;
  auto [model, train] = GetParam();
  PipelineConfig cfg;
  cfg.train = train;
  Pipeline p(loadModel(model), cfg);
  p.runAll();
  RunReport r = runOnCuda(p, 2, 1);
  for (const OutputCheck& c : r.checks) EXPECT_TRUE(c.ok) << model << " " << c.name << ": max abs " << c.diff.maxAbs;
}

INSTANTIATE_TEST_SUITE_P(Zoo, CudaBackend,
                         ::testing::Combine(::testing::Values("mlp", "lenet", "resnet_block", "layernorm_gelu", "gpt2_block",
                                                              "softmax_xent", "mlp_gelu_ln", "xent_logits"),
                                            ::testing::Bool()),
                         [](const auto& info) { return std::get<0>(info.param) + (std::get<1>(info.param) ? "_train" : "_infer"); });

TEST(CudaCodegen, RowReductionsUseBlockReductions) {
  Pipeline p(loadModel("layernorm_gelu"), {});
  p.runUntil(Stage::Schedule);
  CudaModule m = generateCuda(p.loops()[0], p.schedules()[0]);
  EXPECT_NE(m.source.find("fb_block_reduce(acc_b_buf0, FbSum()"), std::string::npos);
  ASSERT_EQ(m.launches.size(), 1u);
  EXPECT_EQ(m.launches[0].grid, 256);   // a block per row
  EXPECT_EQ(m.launches[0].block, 64);  // 1024 columns, sixteen per thread
}

TEST(CudaCodegen, CompileErrorsCarryNvrtcsLog) {
  if (!nvrtcAvailable()) GTEST_SKIP() << "built without the CUDA toolkit";
  test::expectThrowContaining<Error>([] { compileCudaModule("extern \"C\" __global__ void k() { undefined_thing(); }"); },
                                     "generated CUDA does not compile");
}

TEST(CudaRuntime, WithoutAGpuTheTargetSaysWhy) {
  std::string why;
  if (cudaDeviceAvailable(&why)) GTEST_SKIP() << "a GPU is present";
  EXPECT_FALSE(why.empty());
  Pipeline p(loadModel("mlp"), {});
  p.runAll();
  test::expectThrowContaining<Error>([&] { runOnCuda(p, 1, 0); }, "--target cuda:");
}

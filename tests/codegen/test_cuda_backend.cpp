// The CUDA backend: CUDA C++ for every model compiles with NVRTC to PTX with the expected entry
// points (runs in CI, no GPU needed); on a machine with a GPU, every model computes what the
// interpreter computes (skipped cleanly elsewhere).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/codegen/cuda/cuda_codegen.h"
#include "core/codegen/cuda/nvrtc_compiler.h"
#include "core/codegen/cuda/sass_disassembler.h"
#include "core/decompose/decompose.h"
#include "core/frontend/fbx_parser.h"
#include "core/frontend/model_loader.h"
#include "core/loopir/lower.h"
#include "core/ops/binary_math.h"
#include "core/ops/unary_math.h"
#include "core/schedule/schedule.h"
#include "core/runtime/cuda_executable.h"
#include "core/runtime/model_runner.h"
#include "edge_models.h"
#include "test_util.h"

using namespace fusebox;

class CudaBackend : public ::testing::TestWithParam<std::tuple<std::string, bool>> {};

TEST_P(CudaBackend, CompilesToPtxWithEveryEntryPoint) {
  if (!nvrtcAvailable()) GTEST_SKIP() << "NVRTC not available (no CUDA toolkit on this machine)";
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

// A run compiles to the device's machine code as well (the driver then loads it instead of JIT-
// compiling the PTX): an sm_90 ELF image, whose PTX is the same program. No GPU needed.
TEST(CudaCompile, CubinForTheDeviceComesWithThePtx) {
  if (!nvrtcAvailable()) GTEST_SKIP() << "NVRTC not available (no CUDA toolkit on this machine)";
  Pipeline p(loadModel("mlp"), PipelineConfig{});
  p.runUntil(Stage::Schedule);
  CudaModule m = generateCuda(p.loops()[0], p.schedules()[0]);
  auto ptxOnly = compileCudaModule(m.source, 90);
  auto both = compileCudaModule(m.source, 90, CudaOutput::PtxAndCubin);
  EXPECT_TRUE(ptxOnly->cubin.empty());
  ASSERT_GT(both->cubin.size(), 4u);
  EXPECT_EQ(both->cubin.substr(0, 4), std::string("\x7f" "ELF"));
  for (const std::string& e : m.entryPoints) EXPECT_NE(both->ptx.find(".entry " + e + "("), std::string::npos) << e;
  for (const std::string& e : m.entryPoints) EXPECT_NE(both->cubin.find(e), std::string::npos) << e;  // the symbol table names it
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

// Every built-in model trained with all of its dims at 1 and at 3 (as the CPU test does).
class CudaBackendEdgeSizes : public ::testing::TestWithParam<std::tuple<std::string, int64_t>> {};

TEST_P(CudaBackendEdgeSizes, TrainsLikeTheInterpreterOnTheGpu) {
  std::string why;
  if (!nvrtcAvailable() || !cudaDeviceAvailable(&why)) GTEST_SKIP() << "no GPU here: " << why;
  auto [model, size] = GetParam();
  ModelDef def = loadModel(model);
  PipelineConfig cfg;
  for (const auto& [name, defaultSize] : def.dims) cfg.trace.dims[name] = size;
  cfg.train = true;
  Pipeline p(def, cfg);
  p.runAll();
  RunReport r = runOnCuda(p, 1, 3);
  ASSERT_FALSE(r.checks.empty());
  for (const OutputCheck& c : r.checks) EXPECT_TRUE(c.ok) << model << " dims=" << size << " " << c.name << ": max abs " << c.diff.maxAbs;
}

INSTANTIATE_TEST_SUITE_P(Zoo, CudaBackendEdgeSizes,
                         ::testing::Combine(::testing::Values("mlp", "lenet", "resnet_block", "layernorm_gelu", "gpt2_block",
                                                              "softmax_xent", "mlp_gelu_ln", "xent_logits"),
                                            ::testing::Values(int64_t{1}, int64_t{3})),
                         [](const auto& info) { return std::get<0>(info.param) + "_dims" + std::to_string(std::get<1>(info.param)); });

TEST(CudaCodegen, RowReductionsUseBlockReductions) {
  Pipeline p(loadModel("layernorm_gelu"), {});
  p.runUntil(Stage::Schedule);
  CudaModule m = generateCuda(p.loops()[0], p.schedules()[0]);
  EXPECT_NE(m.source.find("fb_block_reduce(acc_b_buf0, FbSum()"), std::string::npos);
  ASSERT_EQ(m.launches.size(), 1u);
  EXPECT_EQ(m.launches[0].grid, 256);   // a block per row
  EXPECT_EQ(m.launches[0].block, 64);  // 1024 columns, sixteen per thread
}

namespace {
CudaModule cudaFor(const std::string& model, bool train, size_t graph, std::map<std::string, int64_t> dims = {}) {
  PipelineConfig cfg;
  cfg.train = train;
  cfg.trace.dims = std::move(dims);
  Pipeline p(loadModel(model), cfg);
  p.runUntil(Stage::Schedule);
  return generateCuda(p.loops().at(graph), p.schedules().at(graph));
}
size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

// LayerNorm + GELU at the benchmark's row length: x is read once, as float4, into registers that
// the mean, variance and output loops share; weight and bias load as float4; the output stores
// as float4. (Measured on the H200 at 86% of the copy bandwidth; bench/RESULTS.md.)
TEST(CudaCodegen, PersistentRowReductionReadsTheRowOnceAsFloat4) {
  CudaModule m = cudaFor("layernorm_gelu", false, 0, {{"N", 64}, {"C", 4096}});
  EXPECT_NE(m.source.find("the row kept in registers"), std::string::npos);
  EXPECT_EQ(count(m.source, "*(const float4*)&b_x["), 1u) << "x must be loaded once";
  EXPECT_NE(m.source.find("*(const float4*)&b_ln_weight[k]"), std::string::npos);
  EXPECT_NE(m.source.find("*(float4*)&b_buf3[k + 4096*m] = make_float4("), std::string::npos);
  EXPECT_EQ(m.launches.at(0).block, 256);  // 4096 columns, sixteen per thread
}

// Cross-entropy over 32000 classes: the forward's max and sum of exp run as one online-softmax
// pass over the logits (one load of them in the whole module), and nothing of logits' size is
// written: the row max and sum are the only stores besides the loss.
TEST(CudaCodegen, CrossEntropyForwardIsOnePassOverTheLogits) {
  CudaModule fwd = cudaFor("xent_logits", true, 0, {{"N", 16}});
  EXPECT_EQ(count(fwd.source, "*(const float4*)&b_logits["), 1u);
  EXPECT_NE(fwd.source.find("*= fb_exp("), std::string::npos) << "no online rescaling of the running sum";
  EXPECT_EQ(count(fwd.source, "32000*m] ="), 0u) << "the forward must not write a logits-sized tensor";
  // the backward: one pointwise kernel, 4 classes per thread, logits in and the gradient out as float4
  CudaModule bwd = cudaFor("xent_logits", true, 1, {{"N", 16}});
  ASSERT_EQ(bwd.launches.size(), 1u);
  EXPECT_NE(bwd.source.find("4 consecutive elements per thread"), std::string::npos);
  EXPECT_NE(bwd.source.find("*(const float4*)&b_logits[k + 32000*m]"), std::string::npos);
  EXPECT_NE(bwd.source.find("*(float4*)&b_buf0[k + 32000*m] = make_float4("), std::string::npos);
}

// A row length that is not a multiple of 4 falls back to one element per step, still correct PTX.
TEST(CudaCodegen, OddRowsUseScalarLoads) {
  CudaModule m = cudaFor("layernorm_gelu", false, 0, {{"N", 8}, {"C", 1001}});
  EXPECT_EQ(count(m.source.substr(m.source.find("// kernel0")), "float4"), 0u);
  if (nvrtcAvailable()) EXPECT_FALSE(compileCudaModule(m.source, 90)->ptx.empty());
}

TEST(CudaCodegen, CompileErrorsCarryNvrtcsLog) {
  if (!nvrtcAvailable()) GTEST_SKIP() << "NVRTC not available (no CUDA toolkit on this machine)";
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

// Every function of the shared unary-math table has an fb_<name> in the CUDA prelude: a graph
// applying each one compiles to PTX (a new table entry without its CUDA helper fails here).
// f16/bf16 graphs (stored as 16-bit patterns, computed in f32 and rounded per op, as on the CPU):
// every module compiles to PTX, and on a GPU matches the interpreter at edge sizes, trained too.
TEST(CudaBackend, HalfPrecisionGraphsCompileAndRunLikeTheInterpreter) {
  if (!nvrtcAvailable()) GTEST_SKIP() << "NVRTC not available (no CUDA toolkit on this machine)";
  std::string why;
  bool gpu = cudaDeviceAvailable(&why);
  for (auto [rows, cols] : {std::pair{1, 1}, std::pair{3, 17}, std::pair{5, 33}, std::pair{64, 1031}})
    for (bool train : {false, true}) {
      PipelineConfig cfg;
      cfg.train = train;
      Pipeline p(parseModel(test::halfPrecisionSource(rows, cols), "half.fbx"), cfg);
      p.runAll();
      for (size_t i = 0; i < p.loops().size(); ++i) {
        CudaModule m = generateCuda(p.loops()[i], p.schedules()[i]);
        EXPECT_NE(m.source.find("fb_f16*"), std::string::npos);
        EXPECT_FALSE(compileCudaModule(m.source, 90)->ptx.empty());
      }
      if (!gpu) continue;
      RunReport r = runOnCuda(p, 1, 5);
      ASSERT_FALSE(r.checks.empty());
      for (const OutputCheck& c : r.checks)
        EXPECT_TRUE(c.ok) << rows << "x" << cols << (train ? " train " : " infer ") << c.name << ": max abs " << c.diff.maxAbs;
    }
  if (!gpu) GTEST_SKIP() << "compiled to PTX only; no GPU here: " << why;
}

// Zero-size tensors (as the CPU test): PTX, and on a GPU the interpreter's numbers.
TEST(CudaBackend, ZeroSizeTensorsCompileAndRunLikeTheInterpreter) {
  if (!nvrtcAvailable()) GTEST_SKIP() << "NVRTC not available (no CUDA toolkit on this machine)";
  std::string why;
  bool gpu = cudaDeviceAvailable(&why);
  for (bool train : {false, true}) {
    PipelineConfig cfg;
    cfg.train = train;
    Pipeline p(parseModel(test::zeroSizeSource(), "zero_size.fbx"), cfg);
    p.runAll();
    for (size_t i = 0; i < p.loops().size(); ++i)
      EXPECT_FALSE(compileCudaModule(generateCuda(p.loops()[i], p.schedules()[i]).source, 90)->ptx.empty());
    if (!gpu) continue;
    RunReport r = runOnCuda(p, 1, 2);
    for (const OutputCheck& c : r.checks) EXPECT_TRUE(c.ok) << (train ? "train " : "infer ") << c.name << ": max abs " << c.diff.maxAbs;
  }
  if (!gpu) GTEST_SKIP() << "compiled to PTX only; no GPU here: " << why;
}

TEST(CudaCodegen, EveryUnaryMathFunctionCompiles) {
  if (!nvrtcAvailable()) GTEST_SKIP() << "NVRTC not available (no CUDA toolkit on this machine)";
  std::string body = "x";
  for (const UnaryMath& u : unaryMathOps()) body += " + " + u.name + "(x)";
  Graph g = test::traceSource("model every(x: f32[4, 8]) {\n  return " + body + "\n}\n");
  LoopProgram lp = lower(decompose(g));
  CudaModule m = generateCuda(lp, schedule(lp));
  for (const UnaryMath& u : unaryMathOps())
    if (!u.cForm) EXPECT_NE(m.source.find("fb_" + u.name + "("), std::string::npos) << u.name;
  EXPECT_FALSE(compileCudaModule(m.source, 90)->ptx.empty());
}

// Every torch-level row of the binary-math table compiles to PTX: its infix operator, or its
// helper (a prelude function, or a libm wrapper made from the row).
TEST(CudaCodegen, EveryBinaryMathOpCompiles) {
  if (!nvrtcAvailable()) GTEST_SKIP() << "NVRTC not available (no CUDA toolkit on this machine)";
  std::string body = "x";
  for (const BinaryMath& b : binaryMathOps()) {
    if (!b.torchOp) continue;
    std::string call = b.name + "(x, y)";
    body += " + " + (b.result == BinaryMath::Result::Bool ? "where(" + call + ", x, y)" : call);
  }
  Graph g = test::traceSource("model every(x: f32[4, 8], y: f32[8]) {\n  return " + body + "\n}\n");
  LoopProgram lp = lower(decompose(g));
  CudaModule m = generateCuda(lp, schedule(lp));
  for (const BinaryMath& b : binaryMathOps())
    if (b.torchOp && b.helper) EXPECT_NE(m.source.find(std::string(b.helper) + "("), std::string::npos) << b.name;
  EXPECT_FALSE(compileCudaModule(m.source, 90)->ptx.empty());
}

// SASS: ptxas assembles the PTX and nvdisasm prints it, both found on the PATH. Here a stand-in
// nvdisasm first on the PATH checks that it was given a non-empty cubin (ptxas's real output) and
// prints a marker; with no such tools anywhere, one line says what to install.
TEST(CudaSass, AssemblesWithPtxasAndDisassemblesOrSaysWhatIsMissing) {
  if (!nvrtcAvailable()) GTEST_SKIP() << "NVRTC not available (no CUDA toolkit on this machine)";
  Pipeline p(loadModel("mlp"), PipelineConfig{});
  p.runUntil(Stage::Schedule);
  std::string ptx = compileCudaModule(generateCuda(p.loops()[0], p.schedules()[0]).source, 90)->ptx;
  std::string dir = ::testing::TempDir() + "fusebox_fake_toolkit_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir + "/nvdisasm");
    f << "#!/bin/sh\n[ \"$1\" = -c ] && [ -s \"$3\" ] && echo \"        /*0000*/  MOV R1, c[0x0][0x28] ; marker\" && exit 0\necho bad args; exit 3\n";
  }
  std::filesystem::permissions(dir + "/nvdisasm", std::filesystem::perms::owner_all);
  const char* old = std::getenv("PATH");
  std::string oldPath = old ? old : "";
  ::setenv("PATH", (dir + ":" + oldPath).c_str(), 1);
  SassListing sass = disassembleSass(ptx, 90);
  ::setenv("PATH", "/nonexistent", 1);
  const char* cudaHome = std::getenv("CUDA_HOME");
  std::string oldHome = cudaHome ? cudaHome : "";
  ::setenv("CUDA_HOME", "/nonexistent", 1);
  bool toolkitInUsrLocal = ::access("/usr/local/cuda/bin/ptxas", X_OK) == 0;
  SassListing none = disassembleSass(ptx, 90);
  ::setenv("PATH", oldPath.c_str(), 1);
  if (cudaHome) ::setenv("CUDA_HOME", oldHome.c_str(), 1); else ::unsetenv("CUDA_HOME");
  std::filesystem::remove_all(dir);
  if (toolkitInUsrLocal) {  // ptxas from the toolkit, the stand-in nvdisasm from the PATH
    EXPECT_TRUE(sass.ok) << sass.text;
    EXPECT_NE(sass.text.find("// SASS for sm_90 (ptxas, then nvdisasm)"), std::string::npos) << sass.text;
    EXPECT_NE(sass.text.find("MOV R1, c[0x0][0x28] ; marker"), std::string::npos) << sass.text;
  } else {
    EXPECT_FALSE(sass.ok);
    EXPECT_NE(sass.text.find("SASS needs ptxas"), std::string::npos) << sass.text;
    EXPECT_FALSE(none.ok);
    EXPECT_NE(none.text.find("SASS needs ptxas and nvdisasm"), std::string::npos) << none.text;
  }
}

// The timed iterations replay one CUDA graph per compiled graph (the check then reads what a
// replay computed), and convolutions run through cuDNN where it is present; with FUSEBOX_NO_CUDNN
// they run the prelude's direct kernels. Both agree with the interpreter, at odd sizes too.
TEST(CudaRuntime, GraphReplaysAndCudnnConvolutionsMatchTheInterpreter) {
  std::string why;
  if (!nvrtcAvailable() || !cudaDeviceAvailable(&why)) GTEST_SKIP() << "no GPU here: " << why;
  for (bool cudnnOff : {false, true}) {
    if (cudnnOff) ::setenv("FUSEBOX_NO_CUDNN", "1", 1);
    for (const char* model : {"lenet", "resnet_block"}) {
      ModelDef def = loadModel(model);
      PipelineConfig cfg;
      for (const auto& [name, defaultSize] : def.dims) cfg.trace.dims[name] = 3;
      cfg.train = true;
      Pipeline p(def, cfg);
      p.runAll();
      RunReport r = runOnCuda(p, 2, 7);
      ASSERT_FALSE(r.checks.empty());
      for (const OutputCheck& c : r.checks) EXPECT_TRUE(c.ok) << model << (cudnnOff ? " direct " : " cuDNN ") << c.name << ": max abs " << c.diff.maxAbs;
      if (cudaGraphsAvailable()) {
        EXPECT_GT(r.graphKernels, 0);
        EXPECT_GE(r.eagerLaunches, static_cast<int>(r.kernels.size()));
      }
      EXPECT_EQ(r.notes.empty(), false) << "a model with convolutions says how they ran";
    }
  }
  ::unsetenv("FUSEBOX_NO_CUDNN");
}

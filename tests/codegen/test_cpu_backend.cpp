// The CPU backend end to end: generated C++ compiles in process and every built-in model, in
// inference and training, computes what the interpreter computes.
#include <gtest/gtest.h>
#include <cmath>

#include "core/codegen/cpu/cpp_codegen.h"
#include "core/codegen/cpu/jit_compiler.h"
#include "core/frontend/fbx_parser.h"
#include "core/frontend/model_loader.h"
#include "core/interp/interpreter.h"
#include "core/ops/binary_math.h"
#include "core/ops/unary_math.h"
#include "core/runtime/cpu_executable.h"
#include "core/runtime/model_runner.h"
#include "core/runtime/thread_pool.h"
#include "scale_models.h"
#include "cpu_check.h"
#include "edge_models.h"
#include "test_util.h"

using namespace fusebox;

namespace {
TraceOptions dimsFor(const std::string& model) {
  if (model == "gpt2_block") return TraceOptions{{{"B", 1}, {"T", 16}}, false};
  return {};
}
}  // namespace

class CpuBackend : public ::testing::TestWithParam<std::tuple<std::string, bool, bool>> {};

TEST_P(CpuBackend, MatchesTheInterpreter) {
  if (!cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  auto [model, train, fusion] = GetParam();
  PipelineConfig cfg;
  cfg.trace = dimsFor(model);
  cfg.train = train;
  cfg.schedule.fusion = fusion;
  Pipeline p(loadModel(model), cfg);
  p.runAll();
  RunReport r = runOnCpu(p, 2, 1, 2);
  ASSERT_FALSE(r.checks.empty());
  for (const OutputCheck& c : r.checks)
    EXPECT_TRUE(c.ok) << model << (train ? " train " : " infer ") << c.name << ": max abs " << c.diff.maxAbs << " rel " << c.diff.maxRel;
  EXPECT_FALSE(r.kernels.empty());
}

INSTANTIATE_TEST_SUITE_P(Zoo, CpuBackend,
                         ::testing::Combine(::testing::Values("mlp", "lenet", "resnet_block", "layernorm_gelu", "gpt2_block",
                                                              "softmax_xent", "mlp_gelu_ln", "xent_logits"),
                                            ::testing::Bool(), ::testing::Bool()),
                         [](const auto& info) {
                           return std::get<0>(info.param) + (std::get<1>(info.param) ? "_train" : "_infer") +
                                  (std::get<2>(info.param) ? "" : "_nofusion");
                         });

// Every built-in model trained with all of its dims at an edge size: 1 (reductions and
// broadcasts over size-1 dims, a batch of one) and 3 (odd, below the vector width).
class CpuBackendEdgeSizes : public ::testing::TestWithParam<std::tuple<std::string, int64_t, bool>> {};

TEST_P(CpuBackendEdgeSizes, TrainsLikeTheInterpreter) {
  if (!cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  auto [model, size, fusion] = GetParam();
  ModelDef def = loadModel(model);
  PipelineConfig cfg;
  for (const auto& [name, defaultSize] : def.dims) cfg.trace.dims[name] = size;
  cfg.train = true;
  cfg.schedule.fusion = fusion;
  Pipeline p(def, cfg);
  p.runAll();
  test::expectCpuMatchesInterpreter(p, 1, 3, 2, model + " dims=" + std::to_string(size));
}

INSTANTIATE_TEST_SUITE_P(Zoo, CpuBackendEdgeSizes,
                         ::testing::Combine(::testing::Values("mlp", "lenet", "resnet_block", "layernorm_gelu", "gpt2_block",
                                                              "softmax_xent", "mlp_gelu_ln", "xent_logits"),
                                            ::testing::Values(int64_t{1}, int64_t{3}), ::testing::Bool()),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_dims" + std::to_string(std::get<1>(info.param)) +
                                  (std::get<2>(info.param) ? "" : "_nofusion");
                         });

TEST(CpuJit, KeepsIrAndAssemblyAndCachesBySource) {
  if (!cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  Pipeline p(loadModel("layernorm_gelu"), {});
  p.runAll();
  auto a = compileCpuModule(p.modules()[0].source);
  auto b = compileCpuModule(p.modules()[0].source);
  EXPECT_TRUE(b->fromCache);
  EXPECT_EQ(a->entry, b->entry);
  EXPECT_NE(a->llvmIR.find("define"), std::string::npos);
  EXPECT_NE(a->llvmIR.find("kernel0"), std::string::npos);
  EXPECT_NE(a->assembly().find("kernel0:"), std::string::npos);
  // The row loops are vectorized (packed single-precision vectors in the IR).
  EXPECT_NE(a->llvmIR.find(" x float>"), std::string::npos);
}

TEST(CpuJit, CompileErrorsNameTheGeneratedLine) {
  if (!cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  test::expectThrowContaining<Error>([] { compileCpuModule("extern \"C\" void fusebox_main() {\n  undefined_thing();\n}\n"); },
                                     ":2:3: error: use of undeclared identifier 'undefined_thing'");
}

TEST(CpuCodegen, SourceNamesNodesAndOrigins) {
  Pipeline p(loadModel("layernorm_gelu"), {});
  p.runUntil(Stage::Codegen);
  const CppModule& m = p.modules()[0].as<CppModule>();
  EXPECT_NE(m.source.find("extern \"C\" void kernel0("), std::string::npos);
  EXPECT_NE(m.source.find("from layer_norm @<builtin>/layernorm_gelu.fbx:6:9"), std::string::npos);
  EXPECT_NE(m.source.find("b_x[k + 1024*m]"), std::string::npos);  // a readable index
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_GT(m.kernels[0].lastLine, m.kernels[0].firstLine);
  EXPECT_FALSE(m.kernels[0].provenance.empty());
}

// Every function of the shared unary-math table, compiled by clang/LLVM, computes what the
// interpreter computes (NaN where both give NaN: log and sqrt see negative inputs), in training
// too (the derivative formulas).
TEST(CpuCodegen, EveryUnaryMathFunctionMatchesTheInterpreter) {
  if (!cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  std::string body = "x";
  for (const UnaryMath& u : unaryMathOps()) body += " + " + u.name + "(x)";
  for (bool train : {false, true}) {
    PipelineConfig cfg;
    cfg.train = train;
    std::string src = "model every(x: f32[4, 8]) {\n  return " + body + "\n}\n";
    if (train) {  // positive inputs: every function is differentiable there
      std::string wbody = "w";
      for (const UnaryMath& u : unaryMathOps()) wbody += " + " + u.name + "(w)";
      src = "model every(x: f32[4, 8]) {\n  param w: f32[4, 8] = uniform(seed=3, low=0.6, high=1.4)\n  return sum(x * (" + wbody + "))\n}\n";
    }
    Pipeline p(parseModel(src, "every.fbx"), cfg);
    p.runAll();
    RunReport r = runOnCpu(p, 1, 1, 1);
    ASSERT_FALSE(r.checks.empty());
    for (const OutputCheck& c : r.checks) EXPECT_TRUE(c.ok) << (train ? "train " : "infer ") << c.name << ": max abs " << c.diff.maxAbs;
  }
}

// Every torch-level row of the shared binary-math table, compiled by clang/LLVM, computes what
// the interpreter computes, forward and backward (comparisons through a where). Positive operands
// keep pow and the derivatives defined.
TEST(CpuCodegen, EveryBinaryMathOpMatchesTheInterpreter) {
  if (!cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  std::string body = "p";
  for (const BinaryMath& b : binaryMathOps()) {
    if (!b.torchOp) continue;
    std::string call = b.name + "(p, q)";
    body += " + " + (b.result == BinaryMath::Result::Bool ? "where(" + call + ", p, q)" : call);
  }
  for (bool train : {false, true}) {
    PipelineConfig cfg;
    cfg.train = train;
    std::string src = "model every(x: f32[3, 7]) {\n  param p: f32[3, 7] = uniform(seed=3, low=0.6, high=1.4)\n"
                      "  param q: f32[7] = uniform(seed=5, low=0.6, high=1.4)\n  return " +
                      std::string(train ? "sum(x * (" + body + "))" : "x * (" + body + ")") + "\n}\n";
    Pipeline p(parseModel(src, "every.fbx"), cfg);
    p.runAll();
    RunReport r = runOnCpu(p, 1, 1, 1);
    ASSERT_FALSE(r.checks.empty());
    for (const OutputCheck& c : r.checks) EXPECT_TRUE(c.ok) << (train ? "train " : "infer ") << c.name << ": max abs " << c.diff.maxAbs;
  }
}

// Bounded work: what a model many ops long or wide lowers to compiles (clang sees no select chain
// hundreds deep, no expression tree past the lowering limits) and matches the interpreter.
namespace {
void expectCompilesAndMatches(const std::string& src, bool train = false) {
  if (!cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  PipelineConfig cfg;
  cfg.train = train;
  Pipeline p(parseModel(src, "scale.fbx"), cfg);
  p.runAll();
  test::expectCpuMatchesInterpreter(p, 1, 1, 2, train ? "train" : "infer");
}
}  // namespace

TEST(CpuScale, ManyInputConcatCompilesAndMatches) { expectCompilesAndMatches(test::concatSource(500)); }

TEST(CpuScale, ThousandOpDagCompilesAndMatches) { expectCompilesAndMatches(test::dagSource(1000)); }

TEST(CpuScale, RejoiningPathsTrainAndMatch) { expectCompilesAndMatches(test::diamondSource(60), true); }

// f16 and bf16 graphs: stored as 16-bit patterns, computed in f32. The generated conversions
// round exactly as the host does (ties to even, subnormals, overflow to inf, NaN), and whole
// graphs (a reduction, a broadcast, mixed types) match the interpreter in inference and
// training at edge sizes.
TEST(CpuCodegen, HalfPrecisionCastsRoundLikeTheHost) {
  if (!cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  std::vector<double> x = {1.0 + std::ldexp(1.0, -11), 1.0 + 3 * std::ldexp(1.0, -11), 1.0 + std::ldexp(1.0, -8), 1.0 + 3 * std::ldexp(1.0, -8),
                           65504.0, 65519.0, 65520.0, 1e6, -1e6, std::ldexp(1.0, -24), std::ldexp(1.0, -25), std::ldexp(3.0, -25),
                           std::ldexp(5.0, -26), std::ldexp(1.0, -14) * 0.999, -0.0, 0.0, INFINITY, -INFINITY, 3e38, 1e-40, -1e-45};
  for (int i = 0; x.size() < 61; ++i) x.push_back(std::ldexp(std::sin(i * 1.7) * 1.9, (i * 7) % 60 - 30));
  for (DType t : {DType::F16, DType::BF16}) {
    std::string name(dtypeName(t));
    Pipeline p(parseModel("model cast(x: f32[61]) {\n  return to(x, dtype=\"" + name + "\")\n}\n", "cast.fbx"), {});
    p.runAll();
    const LoopProgram& lp = p.loops()[0];
    CppModule cpp = generateCpp(lp, p.schedules()[0]);
    ThreadPool pool(1);
    CpuExecutable exe(lp, p.schedules()[0], cpp, compileCpuModule(cpp.source), pool);
    Tensor in(DType::F32, {61});
    for (size_t i = 0; i < x.size(); ++i) in.data[i] = static_cast<float>(x[i]);
    exe.setInputs({in});
    exe.run();
    Tensor out = exe.outputs()[0];
    ASSERT_EQ(out.dtype, t);
    for (size_t i = 0; i < x.size(); ++i) {
      double want = roundToDType(in.data[i], t);
      if (std::isnan(want)) continue;
      EXPECT_EQ(out.data[i], want) << name << " of " << in.data[i];
    }
  }
}

// A Winograd convolution keeps its transformed weights in its scratch from run to run, keyed on
// the weights' input version: weights written again (setInput, setInputs) are transformed again,
// and a second run on the same weights reuses them. A stale cache gives the old weights' outputs.
TEST(CpuBackend, CachedConvolutionWeightsFollowEveryWrite) {
  if (!cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  Pipeline p(parseModel("model wino(x: f32[1, 16, 20, 19], w: f32[12, 16, 3, 3]) {\n  return relu(conv2d(x, w, padding=[1]))\n}\n",
                        "wino.fbx"),
             {});
  p.runAll();
  const LoopProgram& lp = p.loops()[0];
  CppModule cpp = generateCpp(lp, p.schedules()[0]);
  ThreadPool pool(2);
  CpuExecutable exe(lp, p.schedules()[0], cpp, compileCpuModule(cpp.source), pool);
  std::vector<Tensor> a = makeInputs(p.traced(), 1), b = makeInputs(p.traced(), 2);
  auto expectMatches = [&](const std::vector<Tensor>& in, const char* when) {
    exe.run();
    Difference d = compareTensors(exe.outputs()[0], interpret(p.traced(), in)[0]);
    EXPECT_TRUE(d.sameShape && d.maxAbs < 1e-3) << when << ": max abs diff " << d.maxAbs;
  };
  exe.setInputs(a);
  expectMatches(a, "first run");
  expectMatches(a, "second run, the transformed weights reused");
  exe.setInput(1, b[1]);
  expectMatches({a[0], b[1]}, "new weights through setInput");
  exe.setInputs(a);
  expectMatches(a, "the first weights again through setInputs");
}

// A training graph's convolutions keep the interpreter's order of sums (no Winograd): Winograd's
// ~1e-6 rounding put a pre-activation on the other side of a ReLU's 0 in a random 3x3 model
// (x [3, 33, 8, 16], padding 2, the CLI's seed 0), and the weight gradient was off by 8.9.
// Inference keeps Winograd.
TEST(CpuCodegen, TrainingGraphsKeepTheInterpretersSumOrder) {
  const std::string model = "model m(x: f32[3, 33, 8, 16]) {\n  param w: f32[5, 33, 3, 3] = randn(seed=52, std=0.3)\n"
                            "  return relu(conv2d(x, w, padding=[2]))\n}\n";
  for (bool train : {false, true}) {
    PipelineConfig c;
    c.train = train;
    Pipeline p(parseModel(model, "m.fbx"), c);
    p.runAll();
    for (const GeneratedModule& m : p.modules("cpu"))
      EXPECT_EQ(m.source.find("c.exact = 1;") != std::string::npos, train && m.source.find("FbConv c{") != std::string::npos)
          << (train ? "train" : "infer");
    if (train && cpuJitAvailable()) test::expectCpuMatchesInterpreter(p, 1, 0, 2, "relu(conv2d) train");
  }
}

TEST(CpuCodegen, HalfPrecisionGraphsMatchTheInterpreter) {
  if (!cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  for (auto [rows, cols] : {std::pair{1, 1}, std::pair{3, 17}, std::pair{5, 33}})
    for (bool train : {false, true}) {
      std::string src = test::halfPrecisionSource(rows, cols);
      PipelineConfig cfg;
      cfg.train = train;
      Pipeline p(parseModel(src, "half.fbx"), cfg);
      p.runAll();
      test::expectCpuMatchesInterpreter(p, 1, 5, 2, "half " + std::to_string(rows) + "x" + std::to_string(cols) + (train ? " train" : " infer"));
    }
}

// A dim of 0 is legal: nothing is computed for empty values (no loop runs over a dim of 0), and a
// non-empty result of empty inputs is what PyTorch gives (a sum over nothing is 0, a max -inf, a
// matmul over K = 0 zeros, cat leaves the empty part out), trained too.
TEST(CpuBackend, ZeroSizeTensorsMatchTheInterpreter) {
  if (!cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  for (bool train : {false, true}) {
    PipelineConfig cfg;
    cfg.train = train;
    Pipeline p(parseModel(test::zeroSizeSource(), "zero_size.fbx"), cfg);
    p.runAll();
    test::expectCpuMatchesInterpreter(p, 1, 2, 2, train ? "zero_size train" : "zero_size infer");
  }
}

// Every built-in model with its dims at 0 (a batch of none), trained. LeNet's flatten,
// reshape(x, [B, -1]), has no answer at B = 0 (PyTorch refuses it the same way).
TEST(CpuBackend, ZooTrainsWithDimsOfZero) {
  if (!cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  for (const char* model : {"mlp", "resnet_block", "layernorm_gelu", "gpt2_block", "softmax_xent", "mlp_gelu_ln", "xent_logits"}) {
    ModelDef def = loadModel(model);
    PipelineConfig cfg;
    for (const auto& [name, defaultSize] : def.dims) cfg.trace.dims[name] = 0;
    cfg.train = true;
    Pipeline p(def, cfg);
    p.runAll();
    test::expectCpuMatchesInterpreter(p, 1, 3, 2, std::string(model) + " dims=0");
  }
  ModelDef lenet = loadModel("lenet");
  PipelineConfig cfg;
  for (const auto& [name, defaultSize] : lenet.dims) cfg.trace.dims[name] = 0;
  test::expectThrowContaining<Error>([&] { Pipeline(lenet, cfg).runAll(); }, "cannot reshape [0, 16, 5, 5] into [0, -1]");
}

// Every minimized reproducer under tests/regressions (one .fbx per compiler bug found, with a
// comment saying what went wrong) compiles and matches the interpreter on the CPU in every
// config, and its CUDA C++ compiles to PTX. A file whose comment has "train:" is also trained.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/codegen/cpu/jit_compiler.h"
#include "core/codegen/cuda/cuda_codegen.h"
#include "core/codegen/cuda/nvrtc_compiler.h"
#include "core/frontend/model_loader.h"
#include "core/fuzz/differential_check.h"
#include "core/runtime/cuda_executable.h"
#include "cpu_check.h"

using namespace fusebox;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> reproducers() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(FUSEBOX_REGRESSIONS_DIR))
    if (e.path().extension() == ".fbx") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

bool trains(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str().find("train:") != std::string::npos;
}

std::vector<PipelineConfig> configsFor(const std::string& path) {
  std::vector<PipelineConfig> out;
  for (bool train : {false, true}) {
    if (train && !trains(path)) continue;
    for (Partitioner part : {Partitioner::Default, Partitioner::MinCut}) {
      if (!train && part == Partitioner::MinCut) continue;  // the partitioner only splits training graphs
      for (bool fusion : {true, false}) {
        PipelineConfig c;
        c.train = train;
        c.partitioner = part;
        c.schedule.fusion = fusion;
        out.push_back(c);
      }
    }
  }
  return out;
}

std::string describe(const PipelineConfig& c) {
  return std::string(c.train ? "train" : "infer") + (c.partitioner == Partitioner::MinCut ? " mincut" : " default") +
         (c.schedule.fusion ? " fusion" : " no-fusion");
}

}  // namespace

class Regression : public ::testing::TestWithParam<std::string> {};

TEST_P(Regression, MatchesTheInterpreterOnTheCpu) {
  if (!cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  for (const PipelineConfig& c : configsFor(GetParam())) {
    Pipeline p(loadModel(GetParam()), c);
    p.runAll();
    test::expectCpuMatchesInterpreter(p, 1, 5, 2, fs::path(GetParam()).stem().string() + " " + describe(c));
  }
}

TEST_P(Regression, CudaSourceCompilesToPtx) {
  if (!nvrtcAvailable()) GTEST_SKIP() << "NVRTC not available (no CUDA toolkit on this machine)";
  for (const PipelineConfig& c : configsFor(GetParam())) {
    Pipeline p(loadModel(GetParam()), c);
    p.runUntil(Stage::Schedule);
    for (size_t i = 0; i < p.loops().size(); ++i)
      EXPECT_FALSE(compileCudaModule(generateCuda(p.loops()[i], p.schedules()[i]).source, 90)->ptx.empty()) << describe(c);
  }
}

TEST_P(Regression, MatchesTheInterpreterOnTheGpu) {
  std::string why;
  if (!nvrtcAvailable() || !cudaDeviceAvailable(&why)) GTEST_SKIP() << "no GPU here: " << why;
  for (const PipelineConfig& c : configsFor(GetParam())) {
    Pipeline p(loadModel(GetParam()), c);
    p.runAll();
    RunReport r = runOnCuda(p, 1, 5);
    ASSERT_FALSE(r.checks.empty());
    for (const OutputCheck& o : r.checks) EXPECT_TRUE(o.ok) << describe(c) << " " << o.name << ": max abs " << o.diff.maxAbs;
  }
}

// A reproducer written by `fusebox fuzz` names the config it failed under (`# config: cpu train
// mincut fusion`): replayed exactly as the fuzzer checks it (its data, input gradients too).
TEST_P(Regression, PassesTheFuzzerCheckItFailed) {
  std::ifstream f(GetParam());
  std::stringstream text;
  text << f.rdbuf();
  std::optional<fuzz::CheckConfig> c = fuzz::reproducerConfig(text.str());
  if (!c) GTEST_SKIP() << "no fuzzer config line";
  std::string why;
  if (c->target == fuzz::FuzzTarget::Cpu && !cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  if (c->target == fuzz::FuzzTarget::Ptx && !nvrtcAvailable()) GTEST_SKIP() << "NVRTC not available";
  if (c->target == fuzz::FuzzTarget::Cuda && (!nvrtcAvailable() || !cudaDeviceAvailable(&why))) GTEST_SKIP() << "no GPU here: " << why;
  fuzz::FuzzOutcome o = fuzz::checkProgram(text.str(), *c);
  EXPECT_FALSE(o.failed()) << c->str() << ": " << fuzz::outcomeKindName(o.kind) << " at " << o.stage << ": " << o.message;
}

INSTANTIATE_TEST_SUITE_P(Reproducers, Regression, ::testing::ValuesIn(reproducers()),
                         [](const auto& info) { return fs::path(info.param).stem().string(); });

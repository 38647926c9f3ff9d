// `fusebox conformance DIR`: runs ONNX backend test cases (DIR/test_*/model.onnx with
// test_data_set_*/input_*.pb and output_*.pb, as in Debian's libonnx-testdata) through the whole
// pipeline on the CPU target and compares with the expected outputs.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>

#include "app/cli_args.h"
#include "app/commands.h"
#include "core/codegen/cpu/cpp_codegen.h"
#include "core/codegen/cpu/jit_compiler.h"
#include "core/decompose/decompose.h"
#include "core/frontend/model_loader.h"
#include "core/frontend/onnx/onnx_loader.h"
#include "core/frontend/onnx/onnx_test_data.h"
#include "core/interp/interpreter.h"
#include "core/ir/error.h"
#include "core/loopir/lower.h"
#include "core/runtime/cpu_executable.h"
#include "core/runtime/model_runner.h"
#include "core/runtime/thread_pool.h"
#include "core/schedule/schedule.h"

namespace fusebox::cli {

namespace {

namespace fs = std::filesystem;

const char* kConformanceHelp =
    "usage: fusebox conformance DIR [--failures FILE] [--filter TEXT] [--train]\n\n"
    "Runs every ONNX test case under DIR (a folder of test_* case folders, or a folder of such folders,\n"
    "e.g. /usr/share/libonnx-testdata/data) through the whole pipeline on the CPU target and compares\n"
    "with the expected outputs. A model whose shapes depend on input values (a Reshape's shape, Resize's\n"
    "scales given at run time) is specialized: compiled per data set with those inputs bound, as\n"
    "torch.compile specializes on ints. Prints pass / fail / unsupported per folder; --failures writes each\n"
    "failing or unsupported case with its reason. Exit status 0 unless a case crashed the run.\n"
    "  --train   also a training step of every case that passes (gradients of the model's weights\n"
    "            for the loss `run --train` uses), compiled and checked against the interpreter on\n"
    "            seeded inputs; a mismatch fails the case.\n";

enum class Outcome { Pass, Fail, Unsupported };

std::vector<fs::path> sorted(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

bool isUnsupported(const std::string& why) {
  return why.find("not supported") != std::string::npos || why.find("unsupported op type") != std::string::npos ||
         why.find("does not support") != std::string::npos;
}

// Compiles `m` for the CPU and runs it on each data set; "" when every output matches, else the
// reason of the first mismatch.
std::string runSets(const OnnxModel& m, const std::vector<fs::path>& sets, ThreadPool& pool) {
  Graph prims = decompose(m.graph);
  LoopProgram lp = lower(prims);
  Schedule s = schedule(lp);
  CppModule cpp = generateCpp(lp, s);
  auto compiled = compileCpuModule(cpp.source);
  CpuExecutable exe(lp, s, cpp, compiled, pool);
  for (const fs::path& set : sets) {
    std::vector<fs::path> outFiles = sorted(set, "output_");
    exe.setInputs(onnxDataSetInputs(m, set.string()));
    exe.run();
    std::vector<Tensor> got = exe.outputs();
    if (got.size() != outFiles.size())
      throw Error("the model has " + std::to_string(got.size()) + " outputs, the case " + std::to_string(outFiles.size()));
    for (size_t i = 0; i < got.size(); ++i) {
      Tensor want = loadOnnxTensor(outFiles[i].string(), got[i].dtype);
      Tensor g = got[i];
      if (g.numel() != want.numel())
        throw Error("output " + std::to_string(i) + " has " + std::to_string(g.numel()) + " elements, want " + std::to_string(want.numel()));
      g.sizes = want.sizes;
      if (!closeForDType(g, want))
        return set.filename().string() + " output " + std::to_string(i) + ": max abs diff " + std::to_string(compareTensors(g, want).maxAbs);
    }
  }
  return "";
}

// A training step of the model compiled for the CPU and checked against the interpreter on
// seeded inputs: "" when every output and gradient matches, else the first that does not.
std::string trainingMismatch(const fs::path& model) {
  PipelineConfig config;
  config.train = true;
  Pipeline p(loadModel(model.string()), config);
  p.runAll();
  RunReport r = runOnCpu(p, 1, 1, 1, true);
  for (const OutputCheck& c : r.checks)
    if (!c.ok) return "training step: " + c.name + " differs from the interpreter by " + std::to_string(c.diff.maxAbs);
  return r.ok() ? "" : "training step: nothing was checked";
}

// ONNX's own cases whose expected outputs contradict their model: a mismatch there is reported
// (not counted as a failure of the importer) with the reason.
const std::map<std::string, std::string>& inconsistentCases() {
  static const std::map<std::string, std::string> m = {
      {"test_adam_multiple", "its expected outputs were computed with epsilon 1e-2, which the model's Adam node does not set "
                             "(the spec's default is 1e-6); with 1e-2 they match"},
  };
  return m;
}

// One case: every data set must match. `why` gets the reason when it does not pass. A model whose
// shapes depend on an input's values (a Reshape's shape, Resize's scales given at run time) is
// specialized: compiled once per data set with those inputs bound (`specialized` says so).
Outcome runCase(const fs::path& dir, ThreadPool& pool, bool train, std::string& why, bool& specialized) {
  specialized = false;
  try {
    fs::path model = dir / "model.onnx";
    std::vector<fs::path> sets = sorted(dir, "test_data_set_");
    if (sets.empty()) throw Error("no test_data_set_* folder");
    std::optional<OnnxModel> m;
    try {
      m = loadOnnx(model.string());
    } catch (const OnnxInputNeededAtImport&) {
      specialized = true;
    }
    if (m) {
      why = runSets(*m, sets, pool);
    } else {
      for (const fs::path& set : sets) {
        why = runSets(loadOnnxSpecialized(model.string(), set.string()), {set}, pool);
        if (!why.empty()) break;
      }
    }
    if (why.empty() && train) {
      if (specialized) throw Error("training a model specialized to its integer inputs is not supported");
      why = trainingMismatch(model);
    }
    if (why.empty()) return Outcome::Pass;
    if (auto bad = inconsistentCases().find(dir.filename().string()); bad != inconsistentCases().end()) {
      why = "the case is not supported: " + bad->second + " (" + why + ")";
      return Outcome::Unsupported;
    }
    return Outcome::Fail;
  } catch (const std::exception& e) {
    why = e.what();
    return isUnsupported(why) ? Outcome::Unsupported : Outcome::Fail;
  }
}

}  // namespace

int conformanceCommand(const std::vector<std::string>& argv) {
  if (wantsHelp(argv)) return std::cout << kConformanceHelp, 0;
  Args a(argv, {"--failures", "--filter"}, {"--train"});
  if (a.positional().size() != 1) throw UsageError("conformance needs exactly one DIR");
  if (!cpuJitAvailable()) throw Error("conformance: this fusebox was built without the CPU backend (LLVM)");
  fs::path root = a.positional()[0];
  if (!fs::is_directory(root)) throw Error("conformance: '" + root.string() + "' is not a folder");
  // Case folders directly under root, or one level down (data/node/test_*, ...).
  std::vector<fs::path> suites = sorted(root, "test_").empty() ? sorted(root, "") : std::vector<fs::path>{root};
  std::string filter = a.valueOr("--filter", "");
  std::ofstream failures;
  if (auto f = a.value("--failures")) {
    failures.open(*f);
    if (!failures) throw Error("cannot write " + *f);
  }
  ThreadPool pool(1);
  const char* trained = a.flag("--train") ? " in inference and training" : "";
  int total[3] = {0, 0, 0}, totalSpecialized = 0;
  for (const fs::path& suite : suites) {
    if (!fs::is_directory(suite)) continue;
    int count[3] = {0, 0, 0}, specializedPasses = 0;
    for (const fs::path& c : sorted(suite, "test_")) {
      if (!fs::exists(c / "model.onnx") || c.string().find(filter) == std::string::npos) continue;
      std::string why;
      bool specialized = false;
      Outcome o = runCase(c, pool, a.flag("--train"), why, specialized);
      ++count[static_cast<int>(o)];
      specializedPasses += o == Outcome::Pass && specialized;
      if (o != Outcome::Pass && failures.is_open())
        failures << (o == Outcome::Fail ? "FAIL " : "UNSUPPORTED ") << c.string() << ": " << why << "\n";
    }
    int n = count[0] + count[1] + count[2];
    if (!n) continue;
    std::printf("%-40s %5d cases: %5d pass, %5d fail, %5d unsupported (%.1f%% pass%s; %d specialized to input values)\n",
                suite.filename().string().c_str(), n, count[0], count[1], count[2], 100.0 * count[0] / n, trained, specializedPasses);
    for (int i = 0; i < 3; ++i) total[i] += count[i];
    totalSpecialized += specializedPasses;
  }
  int n = total[0] + total[1] + total[2];
  std::printf("%-40s %5d cases: %5d pass, %5d fail, %5d unsupported (%.1f%% pass%s; %d specialized to input values)\n", "total", n,
              total[0], total[1], total[2], n ? 100.0 * total[0] / n : 0.0, trained, totalSpecialized);
  return 0;
}

}  // namespace fusebox::cli

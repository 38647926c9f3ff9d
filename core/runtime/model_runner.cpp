#include "core/runtime/model_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include "core/codegen/compiled_listing.h"
#include "core/codegen/cpu/jit_compiler.h"
#include "core/interp/interpreter.h"
#include "core/codegen/cuda/cuda_codegen.h"
#include "core/codegen/cuda/sass_disassembler.h"
#include "core/codegen/cuda/nvrtc_compiler.h"
#include "core/runtime/cpu_executable.h"
#include "core/runtime/cuda_executable.h"

namespace fusebox {

bool RunReport::ok() const {
  for (const OutputCheck& c : checks)
    if (!c.ok) return false;
  return !checked || !checks.empty();
}

bool closeForDType(const Tensor& got, const Tensor& want) {
  if (got.numel() != want.numel()) return false;
  Tensor g = got;
  g.sizes = want.sizes;
  // f16 (11 significant bits) and bf16 (8): a couple of ulps, since fused kernels keep f32
  // intermediates that the interpreter rounds per op.
  double tol = want.dtype == DType::F64 ? 1e-9 : want.dtype == DType::F16 ? 4e-3 : want.dtype == DType::BF16 ? 3e-2 : 2e-3;
  // Scale the absolute tolerance by the tensor's magnitude: sums over thousands of terms are
  // reassociated by the vectorizer.
  double scale = 0;
  for (double v : want.data)
    if (std::isfinite(v)) scale = std::max(scale, std::fabs(v));  // an expected inf must not make every value close
  return allClose(g, want, tol, tol * std::max(scale, 1e-2) * 0.1);
}

namespace {

// A compiled output (the runtime's are flat) against its reference, in the reference's shape.
OutputCheck compareOutput(const std::string& name, const Tensor& got, const Tensor& want) {
  Tensor g = got;
  if (g.numel() == want.numel()) g.sizes = want.sizes;
  return {name, compareTensors(g, want), closeForDType(got, want)};
}

// Runs compiled graphs (CPU or CUDA executables), times them and checks them.
template <class Exe>
void measureAndCheck(const Pipeline& p, std::vector<std::unique_ptr<Exe>>& exes, int iters, uint64_t seed, bool check,
                     RunReport& report, const RunHooks& hooks, const RunData* data, bool replay = false) {
  constexpr bool kOnDevice = requires(Exe& e) { e.lastDeviceMs(); };
  report.checked = check;
  report.iters = iters;
  const Graph& traced = p.traced();
  std::vector<Tensor> generated;  // seeded inputs, unless the run was given its own (not copied: a model's weights)
  const std::vector<Tensor>& primals = data ? data->inputs : (generated = makeInputs(traced, seed));
  if (primals.size() != traced.inputs().size())
    throw Error("the run has " + std::to_string(primals.size()) + " inputs for the graph's " + std::to_string(traced.inputs().size()));
  bool train = p.config().train;
  std::vector<Tensor> tangents;
  if (train) {
    const Graph& bwd = p.partition().backward;
    for (const GraphInput& in : bwd.inputs())
      if (in.role == InputRole::Tangent) {  // d(loss) = 1 for a scalar loss, seeded noise otherwise
        const TensorType& t = bwd.type(in.value);
        tangents.push_back(t.shape.empty() ? makeTensor(t, InitSpec{InitSpec::Kind::Ones}, 0)
                                           : makeTensor(t, InitSpec{InitSpec::Kind::Randn, 99, 1.0, 0.0}, seed));
      }
  }
  // Inputs are bound once; the backward reads the forward's saved tensors in place.
  exes[0]->setInputs(primals);
  if (train) {
    size_t numFwd = p.joint().numForwardOutputs;
    size_t numSaved = p.partition().report.saved.size();
    for (size_t i = 0; i < numSaved; ++i) exes[1]->linkInput(i, *exes[0], numFwd + i);
    for (size_t i = 0; i < tangents.size(); ++i) exes[1]->setInput(numSaved + i, tangents[i]);
  }
  double deviceMs = 0;
  auto step = [&] {
    for (auto& e : exes) {
      e->run();
      if constexpr (kOnDevice) deviceMs += e->lastDeviceMs();
    }
  };
  step();  // warm-up
  for (auto& e : exes) e->resetProfile();
  replay = replay && !hooks.iteration;  // an observer samples every iteration's kernels
  int profiledIters = iters;
  if constexpr (kOnDevice) {
    if (replay) {  // the per-kernel profile from eager iterations; the timed ones replay graphs
      profiledIters = std::min(iters, 3);
      for (int i = 0; i < profiledIters; ++i) step();
      report.eagerLaunches = 0;
      for (auto& e : exes) report.eagerLaunches += e->launchesPerRun();
      report.graphKernels = 0;
      for (auto& e : exes) {
        e->replay();  // captures and instantiates the graphs outside the timed loop
        report.graphKernels += e->graphKernels();
      }
    }
  }
  deviceMs = 0;
  std::vector<double> before;  // each kernel's total before this iteration
  auto sample = [&](int iteration) {
    std::vector<KernelRow> rows;
    size_t at = 0;
    for (size_t g = 0; g < exes.size(); ++g)
      for (const KernelProfile& k : exes[g]->profile()) {
        if (before.size() <= at) before.push_back(0);
        double ms = k.totalMs - before[at];
        before[at++] = k.totalMs;
        rows.push_back({p.graphName(g), k.name, ms, 1, k.bytes, ms > 0 ? k.bytes / (ms * 1e6) : 0, k.lastStartMs, k.lastLaunchMs});
      }
    double origin = -1;  // the iteration's first event, launch or start (one host clock)
    for (const KernelRow& r : rows)
      for (double t : {r.startMs, r.launchMs})
        if (t >= 0 && (origin < 0 || t < origin)) origin = t;
    for (KernelRow& r : rows) {
      if (r.startMs >= 0) r.startMs -= origin;
      if (r.launchMs >= 0) r.launchMs -= origin;
    }
    hooks.iteration(iteration, rows);
  };
  double observed = 0;  // time spent in the observer, not counted in the step time
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) {
    if constexpr (kOnDevice) {
      if (replay) {
        for (auto& e : exes) e->replay(), deviceMs += e->lastDeviceMs();
        continue;
      }
    }
    step();
    if (hooks.iteration) {
      auto s0 = std::chrono::steady_clock::now();
      sample(i);
      observed += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s0).count();
    }
  }
  report.msPerIter = (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() - observed) / iters;
  report.deviceMsPerIter = deviceMs / iters;

  for (size_t g = 0; g < exes.size(); ++g)
    for (const KernelProfile& k : exes[g]->profile()) {
      KernelRow row{p.graphName(g), k.name, k.totalMs / profiledIters, static_cast<double>(k.calls) / profiledIters, k.bytes, 0};
      row.gbPerSec = row.msPerIter > 0 ? k.bytes / (row.msPerIter * 1e6) : 0;
      report.kernels.push_back(row);
    }

  if (!check) return;
  if (data) {  // the given expected outputs, for as many forward outputs as there are
    std::vector<Tensor> got = exes[0]->outputs();
    for (size_t i = 0; i < data->expected.size() && i < got.size(); ++i) {
      OutputCheck c = compareOutput(traced.value(traced.outputs()[i]).name, got[i], data->expected[i]);
      c.against = data->source + "/output_" + std::to_string(i) + ".pb";
      report.checks.push_back(c);
    }
    if (train) report.notes.push_back("gradients not checked: the data set holds the forward outputs only");
    return;
  }
  // Check against the interpreter: the traced graph (inference) or the joint graph (training).
  const Graph& ref = train ? p.joint().graph : traced;
  std::vector<Tensor> refIn = primals;
  refIn.insert(refIn.end(), tangents.begin(), tangents.end());
  std::vector<Tensor> want = interpret(ref, refIn);
  std::vector<Tensor> got = exes[0]->outputs();
  if (train) {
    got.resize(p.joint().numForwardOutputs);
    std::vector<Tensor> grads = exes[1]->outputs();
    got.insert(got.end(), grads.begin(), grads.end());
  }
  std::vector<Tensor> exact;  // the float64 reference, made only when an output needs it
  for (size_t i = 0; i < want.size(); ++i) {
    OutputCheck c = compareOutput(ref.value(ref.outputs()[i]).name, got[i], want[i]);
    if (!c.ok && want[i].dtype == DType::F32 && std::isfinite(c.diff.maxAbs)) {
      // As torch's accuracy checker with an fp64 reference: within a multiple of the reference's
      // own error. E.g. a bias gradient behind a layer norm is 0 in exact arithmetic.
      if (exact.empty()) exact = interpret(ref, refIn, Precision::Float64);
      c.referenceNoise = compareTensors(want[i], exact[i]).maxAbs;
      c.ok = c.diff.maxAbs <= kReferenceNoiseMultiple * c.referenceNoise;
    }
    report.checks.push_back(c);
  }
}

}  // namespace

RunReport runOnCpu(const Pipeline& p, int iters, uint64_t seed, unsigned threads, bool check, const RunHooks& hooks, const RunData* data) {
  RunReport report;
  ThreadPool pool(threads);
  std::vector<std::unique_ptr<CpuExecutable>> exes;
  const std::vector<GeneratedModule>& modules = p.modules("cpu");
  for (size_t i = 0; i < modules.size(); ++i) {
    auto compiled = compileCpuModule(modules[i].source);
    report.compileMs += compiled->compileMs;
    report.fromCache = compiled->fromCache;
    if (hooks.compiled) {
      hooks.compiled(p.graphName(i), "llvm_ir", compiled->llvmIR);
      hooks.compiled(p.graphName(i), "asm", compiled->assembly(ownLinesFrom(modules[i])));
    }
    exes.push_back(std::make_unique<CpuExecutable>(p.loops()[i], p.schedules()[i], modules[i].as<CppModule>(), compiled, pool));
    report.peakIntermediateBytes += p.schedules()[i].memory.peakIntermediateBytes;
  }
  measureAndCheck(p, exes, iters, seed, check, report, hooks, data);
  return report;
}

RunReport runOnCuda(const Pipeline& p, int iters, uint64_t seed, bool check, const RunHooks& hooks, bool graphs, const RunData* data) {
  std::string why;
  if (!cudaDeviceAvailable(&why)) throw Error("--target cuda: " + why + " (the CUDA code is still generated and compiled: `fusebox dump MODEL --stage cuda`)");
  RunReport report;
  int cc = cudaComputeCapability();
  std::vector<std::unique_ptr<CudaExecutable>> exes;
  const std::vector<GeneratedModule>& modules = p.modules("cuda");
  for (size_t i = 0; i < modules.size(); ++i) {
    auto compiled = compileCudaModule(modules[i].source, cc, CudaOutput::PtxAndCubin);
    report.compileMs += compiled->compileMs;
    report.fromCache = compiled->fromCache;
    if (hooks.compiled) {
      hooks.compiled(p.graphName(i), "ptx", compiled->ptx);
      hooks.compiled(p.graphName(i), "sass", disassembleSass(compiled->ptx, cc).text);
    }
    exes.push_back(std::make_unique<CudaExecutable>(p.loops()[i], p.schedules()[i], modules[i].as<CudaModule>(), compiled));
    if (!exes.back()->convolutions().empty()) report.notes.push_back(p.graphName(i) + " " + exes.back()->convolutions());
    report.peakIntermediateBytes += p.schedules()[i].memory.peakIntermediateBytes;
  }
  measureAndCheck(p, exes, iters, seed, check, report, hooks, data, graphs && cudaGraphsAvailable());
  return report;
}

}  // namespace fusebox

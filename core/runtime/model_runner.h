// Compiles a pipeline's generated code (one module per graph: the inference graph, or the forward
// and backward graphs of a training step) for the CPU or the GPU, runs N iterations, profiles
// every kernel and checks the outputs (and gradients) against the reference interpreter.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/interp/tensor.h"
#include "core/pipeline/pipeline.h"

namespace fusebox {

struct KernelRow {
  std::string graph;   // "forward", "backward", "inference"
  std::string kernel;
  double msPerIter = 0;
  double callsPerIter = 0;
  int64_t bytes = 0;   // read + written per iteration
  double gbPerSec = 0;
  double startMs = -1;  // per iteration: when it began, from the iteration's first kernel (-1: unknown)
  double launchMs = -1;  // CUDA: when the host issued it, on the same axis (-1: unknown)
};

struct OutputCheck {
  std::string name;
  Difference diff;
  bool ok = false;
  // Computed when the tolerance alone fails: the reference's own f32 rounding error (the
  // interpreter rounding per node against float64). A compiled result within
  // kReferenceNoiseMultiple of it is ok: a value that is 0 in exact arithmetic is noise anyway.
  double referenceNoise = 0;
  std::string against = "interpreter";  // or the file of a given expected output (RunData)
};
constexpr double kReferenceNoiseMultiple = 8;

struct RunReport {
  std::vector<KernelRow> kernels;
  std::vector<OutputCheck> checks;
  double msPerIter = 0;      // whole step, wall clock
  double deviceMsPerIter = 0;  // CUDA: whole step on the device, events around each graph's iteration
  // CUDA graphs (timed iterations replayed from one capture per graph): kernels per iteration in
  // the graphs, cuBLAS's own included, and the launches the host made per eager iteration. -1 off.
  int graphKernels = -1;
  int eagerLaunches = -1;
  std::vector<std::string> notes;  // per graph, how the backend ran it (CUDA: cuDNN or not)
  double compileMs = 0;
  bool fromCache = false;
  int64_t peakIntermediateBytes = 0;
  int iters = 0;
  bool checked = true;
  bool ok() const;
};

// Given inputs and expected outputs (an exporter's PyTorch outputs, `fusebox run --data`): the run
// feeds `inputs` (every graph input, in order) and checks the forward outputs against `expected`
// instead of running the interpreter, which a full-size model would wait minutes for.
struct RunData {
  std::vector<Tensor> inputs;
  std::vector<Tensor> expected;
  std::string source;  // the folder, for the report
};

// Optional observers of a run (a session records through them while the run goes on).
struct RunHooks {
  // Each compiled module's artifacts: kind "llvm_ir", "asm" (CPU) or "ptx" (CUDA).
  std::function<void(const std::string& graph, const std::string& kind, const std::string& text)> compiled;
  // After every timed iteration: each kernel's time in that iteration (msPerIter = its ms).
  std::function<void(int iteration, const std::vector<KernelRow>& kernels)> iteration;
};

// The pipeline must have run through Stage::Codegen with concrete shapes.
// `check` false skips the comparison with the interpreter (for sizes the interpreter is too slow for).
RunReport runOnCpu(const Pipeline& p, int iters, uint64_t seed, unsigned threads = 0, bool check = true, const RunHooks& hooks = {},
                   const RunData* data = nullptr);
// CUDA C++ from the same schedules, NVRTC to PTX for the device, driver API + cuBLAS. Throws
// Error naming what is missing when there is no GPU.
// With `graphs` (and no per-iteration observer), the timed iterations replay CUDA graphs and the
// per-kernel profile comes from a few eager iterations before them.
RunReport runOnCuda(const Pipeline& p, int iters, uint64_t seed, bool check = true, const RunHooks& hooks = {}, bool graphs = true,
                    const RunData* data = nullptr);

// Tolerance for comparing f32 compiled results with the interpreter (reassociated sums).
bool closeForDType(const Tensor& got, const Tensor& want);

}  // namespace fusebox

// Stage 8 (CPU): runs a compiled module. Owns the buffers (laid out by the memory plan, so
// buffers whose lifetimes do not overlap share memory), converts inputs and outputs, and times
// every kernel launch.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/codegen/cpu/cpp_codegen.h"
#include "core/codegen/cpu/jit_compiler.h"
#include "core/interp/tensor.h"
#include "core/loopir/loop_ir.h"
#include "core/runtime/thread_pool.h"
#include "core/schedule/schedule.h"

namespace fusebox {

struct KernelProfile {
  std::string name;
  double totalMs = 0;  // summed over runs
  int calls = 0;       // launches (externs may launch more than once per run)
  int64_t bytes = 0;   // bytes read + written per run (from the schedule)
  // When its first launch of the latest run began, in ms of the host's steady clock (-1: not
  // launched in it). A step's timeline places kernels at these, gaps (host work) included.
  double lastStartMs = -1;
  // CUDA: when the host issued that launch, on the same clock (-1: the CPU backend, where the
  // host runs the kernel itself).
  double lastLaunchMs = -1;
};

// Now on the host's steady clock, in ms (the clock of KernelProfile::lastStartMs).
double steadyNowMs();

class CpuExecutable {
public:
  CpuExecutable(const LoopProgram& program, const Schedule& schedule, const CppModule& module,
                std::shared_ptr<const CompiledCpuModule> compiled, ThreadPool& pool);
  ~CpuExecutable();

  void setInputs(const std::vector<Tensor>& inputs);
  void setInput(size_t index, const Tensor& t);
  // Makes input `index` read output `outputIndex` of `from` in place (no copy): how the backward
  // graph takes the tensors the forward graph saved.
  void linkInput(size_t index, const CpuExecutable& from, size_t outputIndex);
  void run();  // one iteration
  std::vector<Tensor> outputs() const;

  const std::vector<KernelProfile>& profile() const { return profile_; }
  void resetProfile();
  int runs() const { return runs_; }
  int64_t bufferBytes() const { return arenaBytes_; }

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<KernelProfile> profile_;
  int runs_ = 0;
  int64_t arenaBytes_ = 0;
};

}  // namespace fusebox

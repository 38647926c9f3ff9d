// Stage 8 (CUDA): runs a CUDA module through the driver API (libcuda opened at run time, so the
// binary runs without a GPU) with cuBLAS for matmuls, CUDA events around every launch for the
// per-kernel profile, and every CUDA call's status checked.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/codegen/cuda/cuda_codegen.h"
#include "core/codegen/cuda/nvrtc_compiler.h"
#include "core/interp/tensor.h"
#include "core/runtime/cpu_executable.h"  // KernelProfile

namespace fusebox {

// Whether a CUDA driver and a device are present; `why` says what is missing otherwise.
bool cudaDeviceAvailable(std::string* why = nullptr);
// Compute capability of device 0 as major*10+minor (e.g. 90), or 0 without a device.
int cudaComputeCapability();
// Whether the driver can capture an iteration as a CUDA graph and replay it.
bool cudaGraphsAvailable();

class CudaExecutable {
public:
  CudaExecutable(const LoopProgram& program, const Schedule& schedule, const CudaModule& module,
                 std::shared_ptr<const CompiledCudaModule> compiled);
  ~CudaExecutable();

  void setInputs(const std::vector<Tensor>& inputs);
  void setInput(size_t index, const Tensor& t);
  void linkInput(size_t index, const CudaExecutable& from, size_t outputIndex);
  void run();     // one iteration, synchronous, each kernel between events (profile())
  // One iteration from a CUDA graph of its launches, captured on the first call (again after
  // linkInput): one launch instead of one per kernel, and no per-kernel events.
  void replay();
  // The device time of the last run() or replay(), from events around the whole iteration.
  double lastDeviceMs() const { return lastDeviceMs_; }
  // Kernels in the captured graph (cuBLAS's included), -1 before replay() captured one.
  int graphKernels() const { return graphKernels_; }
  // Host launches (kernels and cuBLAS calls) one eager iteration makes.
  int launchesPerRun() const { return launches_; }
  // How the convolutions run: "convolutions: 20 of 20 through cuDNN" (empty without any).
  const std::string& convolutions() const { return convolutions_; }
  std::vector<Tensor> outputs() const;
  const std::vector<KernelProfile>& profile() const { return profile_; }
  void resetProfile();

private:
  struct Impl;
  void launchAll(bool profiled);
  void uploadTable();
  void finish();
  void dropGraph();
  void planConvolutions();

  std::unique_ptr<Impl> impl_;
  std::vector<KernelProfile> profile_;
  double lastDeviceMs_ = 0;
  int graphKernels_ = -1;
  int launches_ = 0;
  std::string convolutions_;
};

}  // namespace fusebox

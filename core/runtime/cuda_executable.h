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

class CudaExecutable {
public:
  CudaExecutable(const LoopProgram& program, const Schedule& schedule, const CudaModule& module,
                 std::shared_ptr<const CompiledCudaModule> compiled);
  ~CudaExecutable();

  void setInputs(const std::vector<Tensor>& inputs);
  void setInput(size_t index, const Tensor& t);
  void linkInput(size_t index, const CudaExecutable& from, size_t outputIndex);
  void run();  // one iteration, synchronous
  std::vector<Tensor> outputs() const;
  const std::vector<KernelProfile>& profile() const { return profile_; }
  void resetProfile();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<KernelProfile> profile_;
};

}  // namespace fusebox

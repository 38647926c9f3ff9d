// Stage 7 (CUDA): CUDA C++ -> PTX with NVRTC for a compute capability (sm_90 on the H200;
// compute_90 when no GPU is present, as in CI). Cached by source hash and architecture.
#pragma once

#include <memory>
#include <string>

namespace fusebox {

struct CompiledCudaModule {
  std::string ptx;
  std::string log;        // NVRTC's messages (warnings)
  std::string arch;       // e.g. "compute_90"
  double compileMs = 0;
  bool fromCache = false;
};

bool nvrtcAvailable();

// Throws Error with NVRTC's log (file:line in the generated source) when it does not compile.
std::shared_ptr<const CompiledCudaModule> compileCudaModule(const std::string& source, int computeCapability = 90);

}  // namespace fusebox

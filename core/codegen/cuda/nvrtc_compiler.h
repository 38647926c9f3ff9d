// Stage 7 (CUDA): CUDA C++ -> PTX with NVRTC for a compute capability (sm_90 on the H200;
// compute_90 when no GPU is present, as in CI), and the cubin for a run. Cached by source hash,
// architecture and output.
#pragma once

#include <memory>
#include <string>

namespace fusebox {

struct CompiledCudaModule {
  std::string ptx;
  std::string cubin;      // machine code for the device's sm_XX, when asked for (CudaOutput)
  std::string log;        // NVRTC's messages (warnings)
  std::string arch;       // e.g. "compute_90"
  double compileMs = 0;
  bool fromCache = false;
};

bool nvrtcAvailable();

// PTX alone (for a listing, or CI without a GPU), or PTX and the device's machine code (a run: the
// driver then loads the cubin instead of compiling the PTX, which for a 300-kernel module takes
// seconds that no timer of ours saw).
enum class CudaOutput { Ptx, PtxAndCubin };

// Throws Error with NVRTC's log (file:line in the generated source) when it does not compile.
std::shared_ptr<const CompiledCudaModule> compileCudaModule(const std::string& source, int computeCapability = 90,
                                                           CudaOutput output = CudaOutput::Ptx);

}  // namespace fusebox

// The CUDA row of the backend table: CUDA C++ (core/codegen/cuda) compiled by NVRTC to PTX for
// the GPU present (compute_90 without one), run through the driver API and cuBLAS.
#include "core/backend/backend.h"
#include "core/codegen/cuda/cuda_codegen.h"
#include "core/codegen/cuda/nvrtc_compiler.h"
#include "core/codegen/cuda/sass_disassembler.h"
#include "core/runtime/cuda_executable.h"

namespace fusebox {

namespace {

class CudaBackend final : public Backend {
public:
  const char* name() const override { return "cuda"; }
  const char* language() const override { return "cuda"; }
  const char* title() const override { return "CUDA"; }
  const char* compilerName() const override { return "NVRTC"; }
  bool compilerAvailable() const override { return nvrtcAvailable(); }

  GeneratedModule generate(const LoopProgram& p, const Schedule& s, const std::function<std::string(NodeId)>& describe) const override {
    CudaModule cuda = generateCuda(p, s, describe);
    GeneratedModule m{name(), cuda.source, {}, {}};
    for (const CudaLaunch& l : cuda.launches) m.kernels.push_back({l.kernel, l.name, l.firstLine, l.lastLine, l.provenance});
    m.native = std::move(cuda);
    return m;
  }

  CompiledModule compile(const GeneratedModule& m) const override {
    int cc = cudaComputeCapability() ? cudaComputeCapability() : 90;
    auto c = compileCudaModule(m.source, cc);
    SassListing sass = disassembleSass(c->ptx, cc);
    return {{{"ptx", c->ptx}, {"sass", sass.text}},
            "NVRTC to PTX for compute capability " + std::to_string(cc) + (sass.ok ? ", ptxas to SASS" : "")};
  }

  RunReport run(const Pipeline& p, const RunOptions& o, const RunHooks& hooks) const override {
    return runOnCuda(p, o.iters, o.seed, o.check, hooks, o.cudaGraphs, o.data);
  }
};

}  // namespace

const Backend& cudaBackend() {
  static const CudaBackend backend;
  return backend;
}

}  // namespace fusebox

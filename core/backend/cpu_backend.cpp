// The CPU row of the backend table: C++ (core/codegen/cpu), compiled in process by clang/LLVM,
// run on the thread pool.
#include "core/backend/backend.h"
#include "core/codegen/compiled_listing.h"
#include "core/codegen/cpu/cpp_codegen.h"
#include "core/codegen/cpu/jit_compiler.h"

namespace fusebox {

namespace {

class CpuBackend final : public Backend {
public:
  const char* name() const override { return "cpu"; }
  const char* language() const override { return "cpp"; }
  const char* title() const override { return "C++"; }
  const char* compilerName() const override { return "LLVM"; }
  bool compilerAvailable() const override { return cpuJitAvailable(); }

  GeneratedModule generate(const LoopProgram& p, const Schedule& s, const std::function<std::string(NodeId)>& describe) const override {
    CppModule cpp = generateCpp(p, s, describe);
    GeneratedModule m{name(), cpp.source, {}, {}};
    for (const GeneratedKernel& k : cpp.kernels) m.kernels.push_back({k.kernel, k.name, k.firstLine, k.lastLine, k.provenance});
    m.native = std::move(cpp);
    return m;
  }

  CompiledModule compile(const GeneratedModule& m) const override {
    auto c = compileCpuModule(m.source);
    return {{{"llvm_ir", c->llvmIR}, {"asm", c->assembly(ownLinesFrom(m))}}, c->fromCache ? "clang/LLVM -O3 (cached)" : "clang/LLVM -O3"};
  }

  RunReport run(const Pipeline& p, const RunOptions& o, const RunHooks& hooks) const override {
    return runOnCpu(p, o.iters, o.seed, o.threads, o.check, hooks, o.data);
  }
};

}  // namespace

const Backend& cpuBackend() {
  static const CpuBackend backend;
  return backend;
}

}  // namespace fusebox

// Stage 7 (CPU): compiles generated C++ in process: clang (libclang-cpp 16) -> LLVM IR at -O3
// for the host CPU -> ORC LLJIT. Keeps the optimized LLVM IR (and the assembly, made from it
// when first asked for: it runs the LLVM backend a second time), and caches compiled modules by
// the hash of their source.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace fusebox {

struct CompiledCpuModule {
  void* entry = nullptr;       // fusebox_main(const FuseboxRuntime*, void* const*)
  long* fault = nullptr;       // fusebox_fault[3]: node id + 1, index, size of the first index fault
  std::string llvmIR;          // after optimization
  // Host assembly of the whole module, emitted from llvmIR on the first call (thread-safe). Its
  // .loc lines name, for code inlined from a helper, the line that called it at or below
  // `ownLinesFrom` (core/codegen/compiled_listing: the first kernel's first line).
  std::string assembly(int ownLinesFrom = 0) const;
  double compileMs = 0;
  bool fromCache = false;
  std::string sourceHash;

  struct LazyAssembly;
  std::shared_ptr<LazyAssembly> lazyAssembly;  // shared by the copies a cache hit makes
};

// Whether this build has the LLVM backend.
bool cpuJitAvailable();

// Throws Error with the compiler's diagnostics (file:line:col in the generated source) when the
// source does not compile.
std::shared_ptr<const CompiledCpuModule> compileCpuModule(const std::string& source);

}  // namespace fusebox

// The fixed parts of generated CPU code (see cpu_prelude.cpp).
#pragma once

#include <string>
#include <vector>

namespace fusebox {

// What every generated module starts with: types, the math helpers kernels inline, the runtime
// interface, and the declarations of the externs (convolution, GEMM, pooling, scatter-add).
const char* cpuPrelude();
// The externs' bodies, a translation unit of their own (the prelude, then the definitions):
// compiled once per machine and linked beside every module.
const char* cpuRuntimeLibrary();
// The functions the runtime library gives generated modules (extern "C").
const std::vector<std::string>& cpuRuntimeLibrarySymbols();

}  // namespace fusebox

// Fuzz targets that reach code generation abort (so libFuzzer reports the input) when generated
// source breaks the printers' promise about model text (generatedSourceProblem).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/codegen/cpu/cpu_prelude.h"
#include "core/codegen/cuda/cuda_prelude.h"
#include "core/codegen/source_text.h"

namespace fusebox::fuzz {

[[noreturn]] inline void crash(const std::string& why) {
  std::fprintf(stderr, "%s\n", why.c_str());
  std::abort();
}

inline void checkGeneratedSource(const std::string& source, const std::string& prelude) {
  std::string problem = generatedSourceProblem(source, prelude);
  if (!problem.empty()) crash("generated source check failed: " + problem);
}

}  // namespace fusebox::fuzz

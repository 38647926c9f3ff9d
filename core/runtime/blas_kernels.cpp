#include "core/runtime/blas_kernels.h"

#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <unistd.h>
#endif

#ifdef FUSEBOX_HAS_OPENBLAS
extern "C" char* openblas_get_corename(void);
#endif

namespace fusebox {

void restartForBlasKernels(char** argv) {
#if defined(FUSEBOX_HAS_OPENBLAS) && defined(__linux__) && defined(__x86_64__)
  if (std::getenv("OPENBLAS_CORETYPE")) return;  // the user's choice, or this restart's
  const char* core = openblas_get_corename();
  if (!core || std::strcmp(core, "Prescott") != 0) return;  // not the fallback: a CPU it knows
  const char* wanted = __builtin_cpu_supports("avx512f") ? "SkylakeX" : __builtin_cpu_supports("avx2") ? "Haswell" : nullptr;
  if (!wanted) return;
  setenv("OPENBLAS_CORETYPE", wanted, 1);
  execv("/proc/self/exe", argv);  // on failure: go on with the fallback kernels
#else
  (void)argv;
#endif
}

std::string blasKernels() {
#ifdef FUSEBOX_HAS_OPENBLAS
  const char* core = openblas_get_corename();
  return core ? core : "";
#else
  return "";
#endif
}

}  // namespace fusebox

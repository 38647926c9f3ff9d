// Which kernels OpenBLAS runs on this CPU.
#pragma once

#include <string>

namespace fusebox {

// OpenBLAS picks its kernels as it loads, from the CPU's model number. Debian 12's 0.3.21 does
// not know CPUs newer than itself (a Sapphire Rapids Xeon) and falls back to its Prescott (SSE3)
// kernels: sgemm at 44 GFLOP/s on one core where its SkylakeX kernels run 150-180, and every
// convolution weight gradient and transposed matmul goes through it (resnet18's training step
// 89 -> 41 ms). It reads OPENBLAS_CORETYPE only while loading, so where it fell back on a CPU
// with AVX2 or AVX-512, this starts the process again (same program, same arguments) with
// OPENBLAS_CORETYPE naming those kernels. Returns only if nothing needed doing or the restart failed.
void restartForBlasKernels(char** argv);

// OpenBLAS's name for the kernels it runs ("SkylakeX"), or "" when built without it.
std::string blasKernels();

}  // namespace fusebox

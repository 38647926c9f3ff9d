// The prelude helpers of table ops that are plain libm calls (binary_math rows naming libm
// functions): generated for both preludes, with the JIT's list of callable libm symbols, so
// adding such an op touches no prelude.
#pragma once

#include <string>
#include <vector>

namespace fusebox {

std::string cpuLibmHelpers();   // extern "C" declarations and static inline fb_ wrappers
std::string cudaLibmHelpers();  // __device__ fb_ wrappers
std::vector<std::string> tableLibmSymbols();  // the libm functions they call ("atan2f", "atan2")

}  // namespace fusebox

// Index faults of generated code. Gathers and scatter-adds check every data-dependent index
// against its dimension (CPU and CUDA alike); the first fault of a run is recorded as
// {loop node id + 1, index, size} and the runtime reports it after the run through this.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace fusebox {

// Throws an Error naming the faulting node (from `sites`, the module's indexChecks) when
// `fault` records one; does nothing when fault[0] is 0.
void throwIfIndexFault(const int64_t fault[3], const std::map<int, std::string>& sites);

}  // namespace fusebox

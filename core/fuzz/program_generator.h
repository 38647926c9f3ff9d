// Random, well-typed .fbx programs for differential fuzzing (TorchProbe-style): small DAGs of
// registry ops over shapes drawn to hit edges (size-1 dims anywhere, odd and prime sizes, rows
// longer than a block, broadcasting both ways, views feeding reductions, integer tensors).
#pragma once

#include <cstdint>
#include <string>

#include "core/fuzz/fuzz_program.h"

namespace fusebox::fuzz {

struct GeneratorOptions {
  int minOps = 2;
  int maxOps = 12;
  int64_t maxElements = 100000;  // per tensor
  // A training variant: every output is folded into one scalar f32 loss.
  bool training = false;
};

// Deterministic: the same seed and options give the same program.
FuzzProgram generateFuzzProgram(uint64_t seed, const GeneratorOptions& options);
std::string generateProgram(uint64_t seed, const GeneratorOptions& options);

}  // namespace fusebox::fuzz

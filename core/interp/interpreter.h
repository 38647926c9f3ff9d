// The reference interpreter: evaluates a graph op by op on the CPU. It is the oracle every
// stage is checked against.
#pragma once

#include <cstdint>
#include <vector>

#include "core/interp/tensor.h"
#include "core/ir/graph.h"

namespace fusebox {

enum class Precision {
  Native,   // round every result to its dtype (f32 graphs compute like f32 hardware would, per op)
  Float64,  // keep floating results in double: the high-precision oracle
};

// Runs `g` on `inputs` (one tensor per g.inputs(), in order; shapes must be concrete and match)
// and returns one tensor per graph output. Throws Error naming the node on bad data.
std::vector<Tensor> interpret(const Graph& g, const std::vector<Tensor>& inputs, Precision precision = Precision::Native);

// Deterministic data for every graph input: parameters from their InitSpec, model inputs from
// theirs, all mixed with `seed` so different seeds give different data. Never all zeros for
// random inputs.
std::vector<Tensor> makeInputs(const Graph& g, uint64_t seed);
// `stream` separates tensors that share an init seed (makeInputs passes a hash of the name).
Tensor makeTensor(const TensorType& type, const InitSpec& init, uint64_t seed, uint64_t stream = 0);

}  // namespace fusebox

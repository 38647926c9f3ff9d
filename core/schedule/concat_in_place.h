// A concatenation written in place: where every slice of a concatenation is a convolution's
// output (through a bias, a residual, a clamp or SiLU), each convolution stores straight into its
// slice of the concatenated buffer as its epilogue, and the concatenation (a kernel that copies
// every element) disappears. Inductor realizes such inputs into a NonOwningLayout of the
// ConcatKernel's buffer; squeezenet1_1's fire modules and Inception's branches are this shape.
//
// The slices must be contiguous runs of the buffer (every dimension before the concatenated one
// of size 1, e.g. channels at batch 1), each convolution's output read by nothing but the
// concatenation, so that the convolution kernels run unchanged at an offset.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/loopir/loop_ir.h"
#include "core/schedule/conv_epilogue.h"

namespace fusebox {

struct ConcatSlice {
  int conv = 0;           // the conv2d forward node that writes the slice
  ConvEpilogue epilogue;  // what it applies: output the concatenation's buffer, at outputOffset
};

struct ConcatInPlace {
  int node = 0;  // the concatenation: a pointwise node of where(index < bound, slice, rest) selects
  std::vector<ConcatSlice> slices;
};

// What matchConcatInPlace says of a node that is no concatenation at all.
inline constexpr const char* kNotAConcatenation = "not a concatenation";

// `n` as a concatenation its convolutions can write in place, or nullopt with the reason in `why`.
// `readers`: buffer -> reading nodes.
std::optional<ConcatInPlace> matchConcatInPlace(const LoopProgram& p, const LoopNode& n,
                                                const std::map<std::string, std::vector<int>>& readers, std::string& why);

}  // namespace fusebox

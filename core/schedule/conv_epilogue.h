// A convolution's epilogue: the pointwise nodes after a conv2d forward that the convolution
// kernel applies as it stores each output tile, instead of a kernel of their own that reads the
// whole output back (ORT's FusedConv, Inductor's mkldnn conv-binary-unary fusions):
//
//   y[n, o, p] = act((conv[n, o, p] + bias[o]) + residual[n, o, p])
//
// each part optional; act is max(v, lo) (ReLU), min(max(v, lo), hi) (Clip, ReLU6), or SiLU as
// the decompositions write it, v * (1 / (exp(-v) + 1)) (EfficientNet's swish), evaluated in that
// order with the loop IR's own operations, so the numbers are those of the separate kernels.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/loopir/loop_ir.h"

namespace fusebox {

struct ConvEpilogue {
  std::string bias;      // O floats, read at the output channel; "" for none
  std::string residual;  // a buffer shaped like the output, read at the same point; "" for none
  bool lower = false, upper = false;  // max(v, lo), then min(v, hi)
  double lo = 0, hi = 0;
  bool silu = false;                  // v * (1 / (exp(-v) + 1)), never with the clamps
  std::string output;  // the buffer the last epilogue node writes: the kernel's only store
  // A slice of a concatenation written in place (concat_in_place.h): the element of `output` where
  // the convolution's first output goes (its outputs stay contiguous), and the concatenation's node.
  int64_t outputOffset = 0;
  int concat = -1;
  std::string str() const;  // "+ bias b3, + residual buf7, max 0"
};

// The epilogue that `nodes` (one conv2d forward and pointwise nodes) compute, or nullopt with the
// reason in `why`. Every buffer written inside but the last must be read only inside, by a load
// of the point being computed, and not be a program output. `readers`: buffer -> reading nodes.
std::optional<ConvEpilogue> matchConvEpilogue(const LoopProgram& p, const std::vector<int>& nodes,
                                              const std::map<std::string, std::vector<int>>& readers, std::string& why);
// The same over nodes given directly (a node may be one made up for the purpose: a concatenation's
// slice, concat_in_place.cpp); a reader counts as inside when its id is one of theirs.
std::optional<ConvEpilogue> matchConvEpilogue(const LoopProgram& p, const std::vector<const LoopNode*>& nodes,
                                              const std::map<std::string, std::vector<int>>& readers, std::string& why);

}  // namespace fusebox

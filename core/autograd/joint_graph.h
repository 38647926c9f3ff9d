// Stage 2a: the joint forward+backward graph of a training step (AOTAutograd's joint graph).
// One functional graph: inputs are the primals (model inputs and params) followed by one tangent
// per differentiable forward output; outputs are the forward outputs followed by the gradient of
// every param (and every requested input), in input order.
#pragma once

#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace fusebox {

struct JointOptions {
  std::vector<std::string> gradInputs;  // model inputs (by name) that also get a gradient
  bool allFloatInputs = false;          // every floating-point model input gets a gradient
  bool operator==(const JointOptions&) const = default;
};

struct JointGraph {
  Graph graph;
  size_t numForwardOutputs = 0;
  std::vector<ValueId> gradOf;  // for each gradient output (after the forward outputs): its primal
};

// Throws Error naming the node when an op on the gradient path has no derivative.
JointGraph buildJointGraph(const Graph& forward, const JointOptions& options = {});

}  // namespace fusebox

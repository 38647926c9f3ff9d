// Generic clean-up passes over a functional graph. Both keep node ids, provenance and inputs.
#pragma once

#include "core/ir/graph.h"

namespace fusebox {

// Drops nodes none of whose outputs reach a graph output.
Graph eliminateDeadCode(const Graph& g);

// Merges nodes with the same op, inputs and attributes (the graph is functional and random ops
// are seeded, so equal nodes compute equal values), then drops the duplicates.
Graph eliminateCommonSubexpressions(const Graph& g);

}  // namespace fusebox

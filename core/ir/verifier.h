// Checks the IR invariants of a graph: ids, single definitions, topological order, outputs,
// provenance, and (through an op typer) that every node's output types are what its op infers.
#pragma once

#include <functional>
#include <vector>

#include "core/ir/graph.h"

namespace fusebox {

// Returns the output types `node` should have given its input types; throws ShapeError when the
// node is ill-formed (e.g. an op outside the stage's op set).
using OpTyper = std::function<std::vector<TensorType>(const Node& node, const std::vector<TensorType>& inputs)>;

// Throws VerifyError naming the graph and the offending node.
void verifyGraph(const Graph& g, const OpTyper& typer);

// "node 12 (linear, scope fc1, at mlp.fbx:5:7)": how errors name a node.
std::string describeNode(const Node& n);

}  // namespace fusebox

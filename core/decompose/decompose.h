// Stage 3: decomposition of torch-level graphs into the closed prim set (core/ops/ops_prims.cpp
// lists it with each prim's semantics). Every prim keeps the provenance, scope and source
// location of the torch op it came from.
#pragma once

#include <map>
#include <string>

#include "core/ir/graph.h"

namespace fusebox {

// Throws Error naming the node when an op has no decomposition. The result passes
// verifyGraph(..., primOpTyper()).
Graph decompose(const Graph& g);

// Op name -> number of nodes, for `fusebox dump --stage decompose --stats`.
std::map<std::string, int> countOps(const Graph& g);

// Whether `op` has an entry in the decomposition table.
bool hasDecomposition(const std::string& op);

}  // namespace fusebox

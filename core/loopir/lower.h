// Stage 4: lowering a prim graph to the loop IR. Pointwise prims are inlined into whoever reads
// them (their bodies compose) and realized as buffers only where needed: graph outputs, inputs
// of externs, reductions, and values reused by several consumers when recomputing them would be
// expensive (more than kRealizeReads loads or kRealizeOps ops, Inductor's thresholds).
#pragma once

#include "core/ir/graph.h"
#include "core/loopir/loop_ir.h"

namespace fusebox {

constexpr int kRealizeReads = 4;
constexpr int kRealizeOps = 30;

// Throws Error naming the node for symbolic shapes or unsupported prims.
LoopProgram lower(const Graph& primGraph);

}  // namespace fusebox

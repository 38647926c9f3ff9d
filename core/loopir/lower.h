// Stage 4: lowering a prim graph to the loop IR. Pointwise prims are inlined into whoever reads
// them (their bodies compose) and realized as buffers only where needed: graph outputs, inputs
// of externs, reductions, and values reused by several consumers when recomputing them would be
// expensive (more than kRealizeReads loads or kRealizeOps ops, Inductor's thresholds, or an exp,
// log, tanh, ... of a convolution's output: its epilogue).
#pragma once

#include "core/ir/graph.h"
#include "core/loopir/loop_ir.h"

namespace fusebox {

constexpr int kRealizeReads = 4;
constexpr int kRealizeOps = 30;

// Bounded work on untrusted models: no inlined expression body (LExpr tree, a subtree inlined
// into several places counted at each) is deeper than kMaxExprDepth or larger than
// kMaxExprNodes, so lowering, the loop interpreter, the scheduler and the code emitters never
// recurse deeper than this and never walk an exponential tree. When inlining a producer into its
// consumer would pass a limit, the producer is realized as a buffer instead (split into
// temporaries). A concatenation of more than kCatChunk inputs becomes a tree of concatenations of
// at most kCatChunk inputs each, realized level by level.
constexpr int kMaxExprDepth = 64;
constexpr int kMaxExprNodes = 256;
constexpr int kCatChunk = 16;

// Throws Error naming the node for symbolic shapes or unsupported prims.
LoopProgram lower(const Graph& primGraph);

}  // namespace fusebox

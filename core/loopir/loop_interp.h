// Reference evaluation of a loop program, point by point: the oracle that checks lowering
// (and fusion-independent semantics) against the prim graph it came from.
#pragma once

#include <vector>

#include "core/interp/tensor.h"
#include "core/loopir/loop_ir.h"

namespace fusebox {

// One tensor per program input in, one per program output back.
std::vector<Tensor> interpretLoops(const LoopProgram& p, const std::vector<Tensor>& inputs);

// The value of one body expression at a point (used by the interpreter and by tests).
double evalLExpr(const LExpr& e, const std::map<std::string, int64_t>& vars,
                 const std::map<std::string, const Tensor*>& buffers);

// Runs an extern node with the interpreter's kernel for its prim.
Tensor runExternReference(const LoopNode& n, const LoopProgram& p, const std::vector<const Tensor*>& inputs);

}  // namespace fusebox

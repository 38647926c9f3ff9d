// Graphviz dot of a scheduled loop program: one box per loop-IR node, each fused kernel drawn as
// a cluster (externs in their own), graph inputs as ellipses, edges through buffers. Node names
// are "l<id>" (loop-IR node id) so views can map a laid-out box back to the node.
#pragma once

#include <string>

#include "core/loopir/loop_ir.h"
#include "core/schedule/schedule.h"

namespace fusebox {

std::string printScheduleDot(const LoopProgram& p, const Schedule& s);

}  // namespace fusebox

// Lowering of the reduction prims (one per row of core/ops/reduction_math.def): a Reduction
// node over the reduced dims, its body the inlined input.
#include <algorithm>

#include "core/loopir/lowerer.h"
#include "core/ops/op_schema.h"

namespace fusebox {

namespace {

Lowered lowerReduction(Lowerer& L, const LoweringSite& s, ReduceOp op) {
  const Node& n = s.node;
  const Lowered& src = L.in(n, 0);
  Ints dims = AttrReader{n.attrs}.ints("dims");
  auto isReduced = [&](size_t d) { return std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) != dims.end(); };
  LoopNode node;
  node.kind = LoopNode::Kind::Reduction;
  node.reduceOp = op;
  Ints kept, reduced;
  for (size_t d = 0; d < src.sizes.size(); ++d) (isReduced(d) ? reduced : kept).push_back(src.sizes[d]);
  node.vars = Lowerer::loopVars(kept, "x");
  node.reduceVars = Lowerer::loopVars(reduced, "r");
  Index idx(src.sizes.size());
  size_t ki = 0, ri = 0;
  for (size_t d = 0; d < src.sizes.size(); ++d) {
    const LoopVar& v = isReduced(d) ? node.reduceVars[ri++] : node.vars[ki++];
    idx[d] = IndexExpr::var(v.name, v.size);
  }
  node.body = src.loader(idx);
  node.output = L.newBuffer(s.dtype, s.out);
  node.provenance = ProvenanceSet::merge(ProvenanceSet(n.provenance), src.inlinedProvenance()).ids();
  node.prims = src.prims;
  node.prims.push_back({n.op, n.recomputed});
  node.scope = n.scope;
  std::string output = node.output;
  L.addNode(std::move(node));
  return L.bufferValue(output, s.out, s.dtype);
}

}  // namespace

void addReductionLowerings(LoweringTable& t) {
  for (const ReductionMath& r : reductionMathOps())
    t[r.prim] = [op = r.op](Lowerer& L, const LoweringSite& s) { return lowerReduction(L, s, op); };
}

}  // namespace fusebox

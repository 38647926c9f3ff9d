// Lowering of the extern prims (one per row of core/ops/extern_prims.def): an Extern node on
// realized buffers, except that matmul reads a transposed operand in place.
#include "core/loopir/lowerer.h"

namespace fusebox {

namespace {

// Whether `x` is the transpose (last two dims) of a whole contiguous buffer; then `sizes` gets
// the sizes that buffer is read with.
bool isTransposedBuffer(Lowerer& L, const Lowered& x, Ints& sizes) {
  if (!x.view || x.sizes.size() < 2) return false;
  Ints swapped = x.sizes;
  std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
  Layout t = Layout::contiguous(swapped);
  std::swap(t.strides[t.strides.size() - 1], t.strides[t.strides.size() - 2]);
  if (x.view->second.strides != t.strides || x.view->second.offset != 0 || L.bufferNumel(x.view->first) != x.view->second.numel())
    return false;
  sizes = swapped;
  return true;
}

Lowered lowerExtern(Lowerer& L, const LoweringSite& s, ExternOp op) {
  const Node& n = s.node;
  LoopNode node;
  node.kind = LoopNode::Kind::Extern;
  node.externOp = op;
  node.externAttrs = n.attrs;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Lowered& x = L.in(n, i);
    Ints sizes;
    if (op == ExternOp::Matmul && isTransposedBuffer(L, x, sizes)) {  // transpose_a / transpose_b instead of a copy
      node.externInputs.push_back(x.view->first);
      node.externInputSizes.push_back(sizes);
      node.externAttrs[i == 0 ? "transpose_a" : "transpose_b"] = true;
      continue;
    }
    node.externInputs.push_back(L.realize(n.inputs[i]));
    node.externInputSizes.push_back(L.in(n, i).sizes);
  }
  node.vars = Lowerer::loopVars(s.out, "x");
  node.output = L.newBuffer(s.dtype, s.out);
  node.provenance = n.provenance;
  node.prims = {{n.op, n.recomputed}};
  node.scope = n.scope;
  std::string output = node.output;
  L.addNode(std::move(node));
  return L.bufferValue(output, s.out, s.dtype);
}

}  // namespace

void addExternLowerings(LoweringTable& t) {
  for (const ExternPrim& e : externPrims())
    t[e.prim] = [op = e.op](Lowerer& L, const LoweringSite& s) { return lowerExtern(L, s, op); };
}

}  // namespace fusebox

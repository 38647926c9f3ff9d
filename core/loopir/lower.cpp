#include "core/loopir/lower.h"

#include <algorithm>
#include <set>

#include "core/interp/tensor.h"
#include "core/ir/verifier.h"
#include "core/loopir/lowerer.h"
#include "core/ops/extern_prims.h"
#include "core/ops/reduction_math.h"
#include "core/ops/unary_math.h"
#include "core/ops/shape_rules.h"

namespace fusebox {

namespace {

bool isContiguousFull(const Layout& l, int64_t bufferNumel) {
  return l.offset == 0 && l.strides == Layout::contiguous(l.sizes).strides && l.numel() == bufferNumel;
}

const LoweringTable& loweringTable() {
  static const LoweringTable table = [] {
    LoweringTable t;
    addPointwiseLowerings(t);
    addViewLowerings(t);
    addGatherLowerings(t);
    addReductionLowerings(t);
    addExternLowerings(t);
    return t;
  }();
  return table;
}

}  // namespace

Loader stridedLoader(const std::string& buffer, DType t, const Layout& l) {
  return [buffer, t, l](const Index& idx) { return LExpr::load(buffer, t, linearIndex(idx, l.strides, l.offset)); };
}

LoopProgram Lowerer::run() {
  prog_.name = g_.name;
  countUses();
  for (const GraphInput& in : g_.inputs()) {
    const Value& v = g_.value(in.value);
    Ints sizes = sizesOf(v.type, nullptr);
    Buffer b{v.name, v.type.dtype, Layout::contiguous(sizes), Buffer::Kind::Input};
    prog_.buffers.push_back(b);
    bufferNumel_[v.name] = b.layout.numel();
    prog_.inputs.push_back(v.name);
    Lowered l;
    l.sizes = sizes;
    l.dtype = v.type.dtype;
    l.view = std::make_pair(v.name, b.layout);
    l.loader = stridedLoader(v.name, v.type.dtype, b.layout);
    values_[v.id] = l;
  }
  for (const Node& n : g_.nodes()) {
    try {
      values_[n.outputs[0]] = lowerNode(n);
    } catch (const ShapeError& e) {
      throw Error(describeNode(n) + ": lowering: " + e.message());
    }
  }
  for (ValueId v : g_.outputs()) prog_.outputs.push_back(realize(v));
  for (Buffer& b : prog_.buffers)
    if (b.kind == Buffer::Kind::Intermediate && std::find(prog_.outputs.begin(), prog_.outputs.end(), b.name) != prog_.outputs.end())
      b.kind = Buffer::Kind::Output;
  return std::move(prog_);
}

namespace {

// A value of the given sizes whose every element is v (nothing to compute where it is inlined).
Lowered constantLowered(const Ints& sizes, DType t, double v) {
  Lowered l;
  l.sizes = sizes;
  l.dtype = t;
  l.loader = [t, v](const Index&) { return LExpr::constant(v, t); };
  l.constant = true;
  return l;
}

}  // namespace

Lowered Lowerer::lowerNode(const Node& n) {
  const TensorType& outType = g_.type(n.outputs[0]);
  LoweringSite site{n, sizesOf(outType, &n), outType.dtype};
  const std::string prim = primBaseName(n.op);  // only prims lower: a torch-level op is an error
  auto rule = prim != n.op ? loweringTable().find(prim) : loweringTable().end();
  if (rule == loweringTable().end()) throw Error(describeNode(n) + ": the loop IR has no lowering for '" + n.op + "'");
  // Zero-size values: nothing to compute. Their buffers hold no elements, and no loop runs over
  // a dim of 0; a non-empty result of empty inputs is a constant (or the cat of the others).
  if (numelOf(site.out) == 0) return constantLowered(site.out, site.dtype, 0);
  std::vector<ValueId> nonEmpty;
  for (ValueId v : n.inputs)
    if (numelOf(values_.at(v).sizes) != 0) nonEmpty.push_back(v);
  if (nonEmpty.size() != n.inputs.size()) {
    if (prim == "cat") {
      if (nonEmpty.size() == 1) return values_.at(nonEmpty[0]);
      Node rest = n;
      rest.inputs = nonEmpty;
      return rule->second(*this, LoweringSite{rest, site.out, site.dtype});
    }
    for (const ReductionMath& r : reductionMathOps())
      if (r.prim == prim) return constantLowered(site.out, site.dtype, r.identity);  // a reduction over nothing
    // contractions over an empty dim: K = 0, a weight gradient summed over a batch of 0
    if (prim == "matmul" || prim == "conv2d_backward_weight") return constantLowered(site.out, site.dtype, 0);
    if (prim == "index_add" && nonEmpty.size() == 1 && nonEmpty[0] == n.inputs[0]) return values_.at(n.inputs[0]);  // nothing added
    throw Error(describeNode(n) + ": a zero-size input to '" + n.op + "' with a non-empty result is not supported");
  }
  return rule->second(*this, site);
}

void Lowerer::countUses() {
  for (const Node& n : g_.nodes())
    for (ValueId v : n.inputs) ++uses_[v];
  for (ValueId v : g_.outputs()) ++uses_[v];
}

Ints Lowerer::sizesOf(const TensorType& t, const Node* n) {
  if (!isConcrete(t.shape))
    throw Error((n ? describeNode(*n) + ": " : std::string()) + "lowering needs concrete shapes, got " + t.str() +
                " (trace with concrete dims)");
  return concreteSizes(t.shape);
}

std::string Lowerer::newBuffer(DType t, const Ints& sizes) {
  std::string name = "buf" + std::to_string(nextBuffer_++);
  prog_.buffers.push_back(Buffer{name, t, Layout::contiguous(sizes), Buffer::Kind::Intermediate});
  bufferNumel_[name] = prog_.buffers.back().layout.numel();
  return name;
}

std::vector<LoopVar> Lowerer::loopVars(const Ints& sizes, const char* prefix) {
  std::vector<LoopVar> vs;
  for (size_t i = 0; i < sizes.size(); ++i) vs.push_back(LoopVar{prefix + std::to_string(i), sizes[i]});
  return vs;
}

Index Lowerer::indexOf(const std::vector<LoopVar>& vs) {
  Index ix;
  for (const LoopVar& v : vs) ix.push_back(IndexExpr::var(v.name, v.size));
  return ix;
}

std::string Lowerer::realizeLowered(Lowered& l, const std::string& scope) {
  if (l.view && isContiguousFull(l.view->second, bufferNumel(l.view->first)))
    return l.view->first;  // already the buffer's elements in order (a reshape costs nothing)
  if (numelOf(l.sizes) == 0) {  // an empty buffer: no node writes it
    std::string name = newBuffer(l.dtype, l.sizes);
    l.view = std::make_pair(name, Layout::contiguous(l.sizes));
    l.loader = stridedLoader(name, l.dtype, l.view->second);
    return name;
  }
  LoopNode node;
  node.kind = LoopNode::Kind::Pointwise;
  node.vars = loopVars(l.sizes, "x");
  node.body = l.loader(indexOf(node.vars));
  node.output = newBuffer(l.dtype, l.sizes);
  node.provenance = l.provenance.ids();
  node.prims = l.prims.empty() ? std::vector<PrimUse>{{"copy"}} : l.prims;
  node.scope = scope;
  addNode(std::move(node));
  Layout layout = Layout::contiguous(l.sizes);
  std::string name = prog_.nodes.back().output;
  l.view = std::make_pair(name, layout);
  l.loader = stridedLoader(name, l.dtype, layout);
  l.prims.clear();
  l.opCount = 0;
  l.provenance = {};  // the node computes them; readers of the buffer do not
  l.constant = false;
  l.depth = 1;
  l.size = 1;
  return name;
}

void Lowerer::shrink(ValueId id) {
  Lowered& l = values_.at(id);
  if (!l.view) {
    realize(id);
    return;
  }
  l.loader = stridedLoader(l.view->first, l.dtype, l.view->second);
  l.prims.clear();
  l.provenance = {};
  l.opCount = 0;
  l.depth = 1;
  l.size = 1;
}

void Lowerer::fitInputs(const Node& n, const std::vector<size_t>& which, int extraDepth, int64_t extraSize) {
  for (;;) {
    int depth = 0;
    int64_t size = extraSize;
    for (size_t i : which) depth = std::max(depth, in(n, i).depth), size += in(n, i).size;
    bool deep = depth + extraDepth > kMaxExprDepth, large = size > kMaxExprNodes;
    if (!deep && !large) return;
    std::optional<size_t> pick;
    for (size_t i : which) {
      const Lowered& x = in(n, i);
      if (x.size <= 1 && x.depth <= 1) continue;
      if (!pick || (deep ? x.depth > in(n, *pick).depth : x.size > in(n, *pick).size)) pick = i;
    }
    if (!pick) return;  // every input is one read already: the node's own part is the floor
    shrink(n.inputs[*pick]);
  }
}

std::vector<size_t> Lowerer::allInputs(const Node& n) {
  std::vector<size_t> v(n.inputs.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = i;
  return v;
}

int64_t Lowerer::bufferNumel(const std::string& name) {
  auto it = bufferNumel_.find(name);
  return it != bufferNumel_.end() ? it->second : prog_.buffer(name).layout.numel();
}

std::string Lowerer::scopeOf(ValueId v) {
  NodeId p = g_.value(v).producer;
  return p == kNoId ? "" : g_.node(p).scope;
}

void Lowerer::addNode(LoopNode n) {
  n.id = static_cast<int>(prog_.nodes.size());
  std::sort(n.provenance.begin(), n.provenance.end());
  n.provenance.erase(std::unique(n.provenance.begin(), n.provenance.end()), n.provenance.end());
  prog_.nodes.push_back(std::move(n));
}

Lowered Lowerer::pointwise(const Node& n, Ints sizes, DType t, Loader loader) {
  Lowered l;
  l.sizes = std::move(sizes);
  l.dtype = t;
  l.loader = std::move(loader);
  l.provenance = ProvenanceSet(n.provenance);
  l.depth = 0;
  l.size = 1;
  for (ValueId v : n.inputs) {  // inlined producers (and views) travel along
    const Lowered& x = values_.at(v);
    l.provenance = ProvenanceSet::merge(l.provenance, x.inlinedProvenance());
    l.prims.insert(l.prims.end(), x.prims.begin(), x.prims.end());
    l.opCount += x.opCount;
    l.depth = std::max(l.depth, x.depth);
    l.size += x.size;
  }
  l.depth += 1;
  l.prims.push_back({n.op, n.recomputed});
  l.opCount += 1;
  return l;
}

Lowered Lowerer::viewOf(const Node& n, const Lowered& src, Ints sizes, Loader loader, std::optional<Layout> layout) {
  Lowered l;
  l.sizes = std::move(sizes);
  l.dtype = src.dtype;
  l.loader = std::move(loader);
  l.provenance = ProvenanceSet::merge(src.provenance, ProvenanceSet(n.provenance));
  l.prims = src.prims;
  l.prims.push_back({n.op, n.recomputed});
  l.opCount = src.opCount;
  l.depth = src.depth + 1;
  l.size = src.size + 1;
  l.constant = src.constant;
  if (src.view && layout) l.view = std::make_pair(src.view->first, *layout);
  return l;
}

// Whether e calls an exp, log, tanh, ... (a polynomial of tens of instructions, unary_math.def).
static bool callsPolynomial(const LExpr& e) {
  std::vector<const LExpr*> stack{&e};
  std::set<const LExpr*> seen;
  while (!stack.empty()) {
    const LExpr* x = stack.back();
    stack.pop_back();
    if (!seen.insert(x).second) continue;
    if (x->kind == LExpr::Kind::Unary && unaryMath(x->unaryOp).polynomial) return true;
    for (const LExprPtr& a : x->args) stack.push_back(a.get());
  }
  return false;
}

Lowered Lowerer::finishPointwise(const Node& n, Lowered l) {
  if (l.opCount > kRealizeOps) {
    values_[n.outputs[0]] = l;
    realize(n.outputs[0]);
    return values_[n.outputs[0]];
  }
  // Reused by several consumers and expensive to recompute: realize (Inductor's realize on reuse).
  // Expensive: more than kRealizeReads loads; or an exp, log, ... of a convolution's output, which
  // stored is that convolution's epilogue (EfficientNet's SiLU, read by its squeeze-excite mean
  // and by the product after it, computed two exps an element inlined into both). Elsewhere a
  // stored exp costs a round trip through memory and may split a kernel: recomputing it is as
  // cheap or cheaper (a softmax, or slices that read disjoint parts).
  if (uses_[n.outputs[0]] > 1) {
    std::vector<std::pair<std::string, IndexExpr>> loads;
    LExprPtr e = l.loader(indexOf(loopVars(l.sizes, "x")));
    e->collectLoads(loads);
    auto convOutput = [&](const std::pair<std::string, IndexExpr>& load) {
      const LoopNode* from = prog_.producer(load.first);
      return from && from->kind == LoopNode::Kind::Extern && externPrim(from->externOp).kind == ExternKind::Conv2d;
    };
    if (static_cast<int>(loads.size()) > kRealizeReads ||
        (callsPolynomial(*e) && std::any_of(loads.begin(), loads.end(), convOutput))) {
      values_[n.outputs[0]] = l;
      realize(n.outputs[0]);
      return values_[n.outputs[0]];
    }
  }
  return l;
}

Lowered Lowerer::bufferValue(const std::string& name, const Ints& sizes, DType dt) {
  Lowered l;
  l.sizes = sizes;
  l.dtype = dt;
  Layout layout = Layout::contiguous(sizes);
  l.view = std::make_pair(name, layout);
  l.loader = stridedLoader(name, dt, layout);
  return l;
}

LoopProgram lower(const Graph& primGraph) { return Lowerer(primGraph).run(); }

}  // namespace fusebox

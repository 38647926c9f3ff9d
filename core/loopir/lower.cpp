#include "core/loopir/lower.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "core/ir/verifier.h"
#include "core/loopir/provenance_set.h"
#include "core/ops/binary_math.h"
#include "core/ops/op_schema.h"
#include "core/ops/shape_rules.h"
#include "core/ops/unary_math.h"

namespace fusebox {

namespace {

using Ints = std::vector<int64_t>;
using Index = std::vector<IndexExpr>;
using Loader = std::function<LExprPtr(const Index&)>;

// A prim value during lowering: how to read element `idx`, and, when it is a strided view of
// a realized buffer, that view (externs can take it without a copy).
struct Lowered {
  Ints sizes;
  DType dtype = DType::F32;
  Loader loader;
  std::optional<std::pair<std::string, Layout>> view;
  ProvenanceSet provenance;        // traced nodes inlined into this value (not those realized before it)
  std::vector<std::string> prims;  // prim ops inlined into this value, in order
  int opCount = 0;
  // Upper bounds of what `loader` builds: the depth of the LExpr tree (and of the nested loader
  // calls, a view being one), and its size, a subtree inlined at several places counted at each
  // (views count one each too, so `prims` stays within it). A buffer read is 1 and 1.
  int depth = 1;
  int64_t size = 1;
  // A constant (full, iota, sym_size, or a view of one) computes nothing for whoever inlines it,
  // and CSE shares one across the model (its provenance lists every traced use): its provenance
  // goes to a node that realizes it, not to every node it is inlined into.
  bool constant = false;
  const ProvenanceSet& inlinedProvenance() const {
    static const ProvenanceSet none;
    return constant ? none : provenance;
  }
};

bool isContiguousFull(const Layout& l, int64_t bufferNumel) {
  return l.offset == 0 && l.strides == Layout::contiguous(l.sizes).strides && l.numel() == bufferNumel;
}

Loader stridedLoader(const std::string& buffer, DType t, const Layout& l) {
  return [buffer, t, l](const Index& idx) { return LExpr::load(buffer, t, linearIndex(idx, l.strides, l.offset)); };
}

// The placeholder coordinate of a gather's source, replaced by the gathered index value.
const char* const kGatherVar = "gather_";

// `e` with every load that depends on the coordinate variable `coord` turned into an indirect
// load at `value`, or nullopt when some use of it is not a plain linear term of a load index
// (a div/mod of it, through a reshape, or an iota of it) or the dim has size 1.
std::optional<LExprPtr> withIndirectCoordinate(const LExprPtr& e, const IndexExpr& coord, int64_t extent, const LExprPtr& value) {
  // A size-1 dim has no coordinate variable (it is the constant 0): nothing to rewrite, and the
  // caller realizes the source instead, whose indirect load still checks the index.
  if (coord.variables().empty()) return std::nullopt;
  const std::string name = coord.variables()[0];
  auto copy = std::make_shared<LExpr>(*e);
  for (LExprPtr& a : copy->args) {
    auto r = withIndirectCoordinate(a, coord, extent, value);
    if (!r) return std::nullopt;
    a = *r;
  }
  auto vars = e->index.variables();
  if (std::find(vars.begin(), vars.end(), name) == vars.end()) return LExprPtr(copy);
  if (e->kind != LExpr::Kind::Load) return std::nullopt;
  IndexExpr base = e->index.substitute({{name, IndexExpr(0)}});
  IndexExpr step = e->index.substitute({{name, IndexExpr(1)}}) - base;
  if (!step.isConstant() || e->index != base + step * coord) return std::nullopt;
  return LExpr::loadIndirect(e->op, e->dtype, base, step.constant(), extent, value);
}

class Lowerer {
public:
  explicit Lowerer(const Graph& g) : g_(g) {}

  LoopProgram run() {
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
    for (ValueId v : g_.outputs()) {
      std::string name = realize(v);
      prog_.outputs.push_back(name);
    }
    for (Buffer& b : prog_.buffers)
      if (b.kind == Buffer::Kind::Intermediate &&
          std::find(prog_.outputs.begin(), prog_.outputs.end(), b.name) != prog_.outputs.end())
        b.kind = Buffer::Kind::Output;
    return std::move(prog_);
  }

private:
  void countUses() {
    for (const Node& n : g_.nodes())
      for (ValueId v : n.inputs) ++uses_[v];
    for (ValueId v : g_.outputs()) ++uses_[v];
  }

  Ints sizesOf(const TensorType& t, const Node* n) {
    if (!isConcrete(t.shape))
      throw Error((n ? describeNode(*n) + ": " : std::string()) + "lowering needs concrete shapes, got " + t.str() +
                  " (trace with concrete dims)");
    return concreteSizes(t.shape);
  }

  const Lowered& in(const Node& n, size_t i) { return values_.at(n.inputs.at(i)); }

  std::string newBuffer(DType t, const Ints& sizes) {
    std::string name = "buf" + std::to_string(nextBuffer_++);
    prog_.buffers.push_back(Buffer{name, t, Layout::contiguous(sizes), Buffer::Kind::Intermediate});
    bufferNumel_[name] = prog_.buffers.back().layout.numel();
    return name;
  }

  std::vector<LoopVar> loopVars(const Ints& sizes, const char* prefix) {
    std::vector<LoopVar> vs;
    for (size_t i = 0; i < sizes.size(); ++i) vs.push_back(LoopVar{prefix + std::to_string(i), sizes[i]});
    return vs;
  }
  static Index indexOf(const std::vector<LoopVar>& vs) {
    Index ix;
    for (const LoopVar& v : vs) ix.push_back(IndexExpr::var(v.name, v.size));
    return ix;
  }

  // Makes value `v` a contiguous buffer (a Pointwise node) unless it already is one.
  std::string realize(ValueId id) { return realizeLowered(values_.at(id), scopeOf(id)); }

  std::string realizeLowered(Lowered& l, const std::string& scope) {
    if (l.view && isContiguousFull(l.view->second, bufferNumel(l.view->first)))
      return l.view->first;  // already the buffer's elements in order (a reshape costs nothing)
    LoopNode node;
    node.kind = LoopNode::Kind::Pointwise;
    node.vars = loopVars(l.sizes, "x");
    node.body = l.loader(indexOf(node.vars));
    node.output = newBuffer(l.dtype, l.sizes);
    node.provenance = l.provenance.ids();
    node.prims = l.prims.empty() ? std::vector<std::string>{"copy"} : l.prims;
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

  // Makes value `id` a single buffer read: a strided view reads its buffer directly (its
  // view ops compute nothing), anything else is realized.
  void shrink(ValueId id) {
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

  // Realizes (or rebases) inputs `which` of `n`, the largest or deepest first, until the value
  // built from them, `extraDepth` levels and `extraSize` nodes of its own on top, fits the limits.
  void fitInputs(const Node& n, const std::vector<size_t>& which, int extraDepth, int64_t extraSize) {
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

  std::vector<size_t> allInputs(const Node& n) {
    std::vector<size_t> v(n.inputs.size());
    for (size_t i = 0; i < v.size(); ++i) v[i] = i;
    return v;
  }

  int64_t bufferNumel(const std::string& name) {
    auto it = bufferNumel_.find(name);
    return it != bufferNumel_.end() ? it->second : prog_.buffer(name).layout.numel();
  }

  std::string scopeOf(ValueId v) {
    NodeId p = g_.value(v).producer;
    return p == kNoId ? "" : g_.node(p).scope;
  }

  void addNode(LoopNode n) {
    n.id = static_cast<int>(prog_.nodes.size());
    std::sort(n.provenance.begin(), n.provenance.end());
    n.provenance.erase(std::unique(n.provenance.begin(), n.provenance.end()), n.provenance.end());
    prog_.nodes.push_back(std::move(n));
  }

  Lowered pointwise(const Node& n, Ints sizes, DType t, Loader loader) {
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
    l.prims.push_back(n.op);
    l.opCount += 1;
    return l;
  }

  // A view keeps the strided-buffer form when the index map is affine in strides.
  Lowered viewOf(const Node& n, const Lowered& src, Ints sizes, Loader loader, std::optional<Layout> layout) {
    Lowered l;
    l.sizes = std::move(sizes);
    l.dtype = src.dtype;
    l.loader = std::move(loader);
    l.provenance = ProvenanceSet::merge(src.provenance, ProvenanceSet(n.provenance));
    l.prims = src.prims;
    l.prims.push_back(n.op);
    l.opCount = src.opCount;
    l.depth = src.depth + 1;
    l.size = src.size + 1;
    l.constant = src.constant;
    if (src.view && layout) l.view = std::make_pair(src.view->first, *layout);
    return l;
  }

  Lowered lowerNode(const Node& n) {
    AttrReader a{n.attrs};
    const TensorType& outType = g_.type(n.outputs[0]);
    Ints out = sizesOf(outType, &n);
    DType dt = outType.dtype;
    const std::string op = n.op.substr(6);  // without "prims."
    const BinaryMath* binaryOp = findBinaryMath(op);
    if (findUnaryMath(op) || binaryOp || op == "where" || op == "convert_element_type" ||
        op == "broadcast_in_dim" || op == "reshape" || op == "permute" || op == "slice")
      fitInputs(n, allInputs(n), 1, 1);
    if (op == "pad") fitInputs(n, {0}, 5, 13);  // where(and(and(ge, lt), eq), x, value) over index values
    if (findUnaryMath(op)) {
      Loader x = in(n, 0).loader;
      return finishPointwise(n, pointwise(n, out, dt, [x, op, dt](const Index& i) { return LExpr::unary(op, x(i), dt); }));
    }
    if (binaryOp) {
      Loader x = in(n, 0).loader, y = in(n, 1).loader;
      return finishPointwise(n, pointwise(n, out, dt, [x, y, op, dt](const Index& i) { return LExpr::binary(op, x(i), y(i), dt); }));
    }
    if (op == "where") {
      Loader c = in(n, 0).loader, x = in(n, 1).loader, y = in(n, 2).loader;
      return finishPointwise(n, pointwise(n, out, dt, [c, x, y](const Index& i) { return LExpr::where(c(i), x(i), y(i)); }));
    }
    if (op == "convert_element_type") {
      Loader x = in(n, 0).loader;
      return finishPointwise(n, pointwise(n, out, dt, [x, dt](const Index& i) { return LExpr::cast(x(i), dt); }));
    }
    if (op == "full" || op == "sym_size") {
      double v = op == "full" ? a.f("value") : static_cast<double>(a.dim("size").value());
      Lowered l = pointwise(n, out, dt, [v, dt](const Index&) { return LExpr::constant(v, dt); });
      l.constant = true;
      return l;
    }
    if (op == "iota") {
      Lowered l = pointwise(n, out, dt, [dt](const Index& i) { return LExpr::indexValue(i[0], dt); });
      l.constant = true;
      return l;
    }
    if (op == "uniform_random") {
      int64_t seed = a.i("seed");
      Ints strides = Layout::contiguous(out).strides;
      return finishPointwise(n, pointwise(n, out, dt, [seed, strides, dt](const Index& i) {
        auto e = std::make_shared<LExpr>();
        e->kind = LExpr::Kind::Random;
        e->dtype = dt;
        e->seed = seed;
        e->index = linearIndex(i, strides);
        return LExprPtr(e);
      }));
    }
    if (op == "broadcast_in_dim") {
      const Lowered& src = in(n, 0);
      const Ints& bd = a.ints("broadcast_dimensions");
      Ints srcSizes = src.sizes;
      Loader x = src.loader;
      auto map = [bd, srcSizes](const Index& i) {
        Index j;
        for (size_t k = 0; k < bd.size(); ++k) j.push_back(srcSizes[k] == 1 ? IndexExpr(0) : i[bd[k]]);
        return j;
      };
      std::optional<Layout> layout;
      if (src.view) {
        Layout l;
        l.sizes = out;
        l.strides.assign(out.size(), 0);
        l.offset = src.view->second.offset;
        for (size_t k = 0; k < bd.size(); ++k) l.strides[bd[k]] = srcSizes[k] == 1 ? 0 : src.view->second.strides[k];
        layout = l;
      }
      return viewOf(n, src, out, [x, map](const Index& i) { return x(map(i)); }, layout);
    }
    if (op == "reshape") {
      const Lowered& src = in(n, 0);
      Ints srcSizes = src.sizes;
      Loader x = src.loader;
      Ints outStrides = Layout::contiguous(out).strides;
      std::optional<Layout> layout;
      if (src.view && src.view->second.strides == Layout::contiguous(srcSizes).strides) {
        Layout l = Layout::contiguous(out);
        l.offset = src.view->second.offset;
        layout = l;
      }
      return viewOf(n, src, out, [x, srcSizes, outStrides](const Index& i) {
        return x(unflatten(linearIndex(i, outStrides), srcSizes));
      }, layout);
    }
    if (op == "permute") {
      const Lowered& src = in(n, 0);
      Ints dims = a.ints("dims");
      Loader x = src.loader;
      std::optional<Layout> layout;
      if (src.view) {
        Layout l;
        l.offset = src.view->second.offset;
        for (int64_t d : dims) l.sizes.push_back(src.view->second.sizes[d]), l.strides.push_back(src.view->second.strides[d]);
        layout = l;
      }
      return viewOf(n, src, out, [x, dims](const Index& i) {
        Index j(dims.size());
        for (size_t k = 0; k < dims.size(); ++k) j[dims[k]] = i[k];
        return x(j);
      }, layout);
    }
    if (op == "slice") {
      const Lowered& src = in(n, 0);
      int64_t d = a.i("dim"), start = a.i("start"), step = a.i("step");
      Loader x = src.loader;
      std::optional<Layout> layout;
      if (src.view) {
        Layout l = src.view->second;
        l.offset += start * l.strides[d];
        l.strides[d] *= step;
        l.sizes = out;
        layout = l;
      }
      return viewOf(n, src, out, [x, d, start, step](const Index& i) {
        Index j = i;
        j[d] = i[d] * IndexExpr(step) + IndexExpr(start);
        return x(j);
      }, layout);
    }
    if (op == "pad") {
      const Lowered& src = in(n, 0);
      int64_t d = a.i("dim"), low = a.i("low"), stride = a.i("interior") + 1, len = src.sizes[d];
      double value = a.f("value");
      Loader x = src.loader;
      return finishPointwise(n, pointwise(n, out, dt, [x, d, low, stride, len, value, dt](const Index& i) {
        IndexExpr rel = i[d] - IndexExpr(low);
        auto idx = [&](const IndexExpr& e) { return LExpr::indexValue(e, DType::I64); };
        auto cmp = [&](const char* o, LExprPtr l, int64_t r) { return LExpr::binary(o, l, LExpr::constant(r, DType::I64), DType::Bool); };
        LExprPtr valid = LExpr::binary("and", cmp("ge", idx(rel), 0), cmp("lt", idx(rel), (len - 1) * stride + 1), DType::Bool);
        if (stride > 1) valid = LExpr::binary("and", valid, cmp("eq", idx(rel.mod(stride)), 0), DType::Bool);
        Index j = i;
        j[d] = stride > 1 ? rel.floorDiv(stride) : rel;
        return LExpr::where(valid, x(j), LExpr::constant(value, dt));
      }));
    }
    if (op == "cat") return finishPointwise(n, lowerCat(n, a.i("dim"), dt));
    if (op == "gather" || op == "index_select") {
      fitGather(n);
      int64_t d = a.i("dim");
      Loader idx = in(n, 1).loader;
      bool isGather = op == "gather";
      auto indexValue = [=](const Index& i) { return isGather ? idx(i) : idx(Index{i[d]}); };
      // The source's element at the data-dependent coordinate: when every load of the source
      // uses that coordinate linearly, its loads become indirect and the source stays inlined
      // (a cross-entropy picks one log-probability per row without writing the whole tensor).
      Loader src = in(n, 0).loader;
      const int64_t extent = in(n, 0).sizes[d];
      // One placeholder per gather: a gather of a gather (cross_entropy of an embedding) must not
      // confuse the inner coordinate with the outer one.
      const IndexExpr picked = IndexExpr::var(kGatherVar + std::to_string(n.id), extent);
      auto inlined = [=](const Index& i) {
        Index j = i;
        j[d] = picked;
        return withIndirectCoordinate(src(j), picked, extent, indexValue(i));
      };
      if (inlined(indexOf(loopVars(out, "x")))) {
        Loader inl = [=](const Index& i) { return *inlined(i); };
        Lowered l = pointwise(n, out, dt, inl);
        l.depth = in(n, 0).depth + in(n, 1).depth + 1;  // every load of the source reads at the index value
        l.size = in(n, 0).size * (in(n, 1).size + 1) + 1;
        return finishPointwise(n, l);
      }
      // Otherwise realize the source so its layout is known.
      std::string srcBuf = realize(n.inputs[0]);
      Ints srcStrides = Layout::contiguous(in(n, 0).sizes).strides;
      DType srcType = in(n, 0).dtype;
      return finishPointwise(n, pointwise(n, out, dt, [=](const Index& i) {
        Index base = i;
        base[d] = IndexExpr(0);
        return LExpr::loadIndirect(srcBuf, srcType, linearIndex(base, srcStrides), srcStrides[d], extent, indexValue(i));
      }));
    }
    if (op == "sum" || op == "amax" || op == "amin") return reduction(n, op == "sum" ? "sum" : op == "amax" ? "max" : "min", out, dt);
    return externNode(n, op, out, dt);
  }

  // A gather inlines its source with every load of it reading at the index value: the tree is
  // at most the source's size times the index's, as deep as both together.
  void fitGather(const Node& n) {
    for (;;) {
      const Lowered &src = in(n, 0), &idx = in(n, 1);
      if (src.depth + idx.depth + 1 <= kMaxExprDepth && src.size * (idx.size + 1) + 1 <= kMaxExprNodes) return;
      if (idx.size > 1 || idx.depth > 1) shrink(n.inputs[1]);
      else if (src.size > 1 || src.depth > 1) shrink(n.inputs[0]);
      else return;
    }
  }

  // The concatenation of `parts` along `d`: a chain of selects on the coordinate (the node's own
  // provenance and prim included).
  Lowered catOf(const Node& n, const std::vector<Lowered>& parts, int64_t d, DType dt) {
    Lowered l;
    l.sizes = parts.at(0).sizes;
    l.sizes[d] = 0;
    l.dtype = dt;
    l.provenance = ProvenanceSet(n.provenance);
    std::vector<std::pair<int64_t, Loader>> starts;  // (start offset, loader)
    int maxDepth = 0;
    for (const Lowered& x : parts) {
      starts.emplace_back(l.sizes[d], x.loader);
      l.sizes[d] += x.sizes[d];
      l.provenance = ProvenanceSet::merge(l.provenance, x.inlinedProvenance());
      l.prims.insert(l.prims.end(), x.prims.begin(), x.prims.end());
      l.opCount += x.opCount;
      l.size += x.size + 4;  // where(lt(index, start), part, rest)
      maxDepth = std::max(maxDepth, x.depth);
    }
    l.prims.push_back(n.op);
    l.opCount += 1;
    l.depth = maxDepth + static_cast<int>(parts.size()) + 2;
    l.loader = [starts, d, dt](const Index& i) {
      LExprPtr result;
      for (size_t k = starts.size(); k-- > 0;) {
        Index j = i;
        j[d] = i[d] - IndexExpr(starts[k].first);
        LExprPtr v = starts[k].second(j);
        if (!result) {
          result = v;
          continue;
        }
        LExprPtr before = LExpr::binary("lt", LExpr::indexValue(i[d], DType::I64),
                                        LExpr::constant(static_cast<double>(starts[k + 1].first), DType::I64), DType::Bool);
        result = LExpr::where(before, v, result);
      }
      return result;
    };
    return l;
  }

  // Up to kCatChunk inputs: one select chain. More: chunks of kCatChunk consecutive inputs are
  // realized as buffers, level by level, so no body holds more than kCatChunk parts.
  Lowered lowerCat(const Node& n, int64_t d, DType dt) {
    const auto count = static_cast<int64_t>(n.inputs.size());
    const int64_t chunk = std::min<int64_t>(count, kCatChunk);
    // Each part gets an equal share of the limits, so any chunk of them fits.
    const int partDepth = kMaxExprDepth - static_cast<int>(chunk) - 2;
    const int64_t partSize = kMaxExprNodes / chunk - 4;
    if (count <= kCatChunk) fitInputs(n, allInputs(n), static_cast<int>(count) + 2, 4 * count);
    else
      for (size_t k = 0; k < n.inputs.size(); ++k)
        if (in(n, k).depth > partDepth || in(n, k).size > partSize) shrink(n.inputs[k]);
    std::vector<Lowered> parts;
    for (size_t k = 0; k < n.inputs.size(); ++k) parts.push_back(in(n, k));
    while (static_cast<int64_t>(parts.size()) > kCatChunk) {
      std::vector<Lowered> next;
      for (size_t b = 0; b < parts.size(); b += kCatChunk) {
        std::vector<Lowered> group(parts.begin() + b, parts.begin() + std::min(parts.size(), b + kCatChunk));
        if (group.size() == 1) {
          next.push_back(std::move(group[0]));
          continue;
        }
        Lowered l = catOf(n, group, d, dt);
        realizeLowered(l, n.scope);
        next.push_back(std::move(l));
      }
      parts = std::move(next);
    }
    return catOf(n, parts, d, dt);
  }

  // Realizes a pointwise value at once when its body has grown past the inlining limit.
  Lowered finishPointwise(const Node& n, Lowered l) {
    if (l.opCount > kRealizeOps) {
      values_[n.outputs[0]] = l;
      realize(n.outputs[0]);
      return values_[n.outputs[0]];
    }
    // Reused by several consumers and expensive to recompute: realize (Inductor's realize on reuse).
    if (uses_[n.outputs[0]] > 1) {
      std::vector<std::pair<std::string, IndexExpr>> loads;
      l.loader(indexOf(loopVars(l.sizes, "x")))->collectLoads(loads);
      if (static_cast<int>(loads.size()) > kRealizeReads) {
        values_[n.outputs[0]] = l;
        realize(n.outputs[0]);
        return values_[n.outputs[0]];
      }
    }
    return l;
  }

  Lowered reduction(const Node& n, const std::string& kind, const Ints& out, DType dt) {
    const Lowered& src = in(n, 0);
    Ints dims = AttrReader{n.attrs}.ints("dims");
    LoopNode node;
    node.kind = LoopNode::Kind::Reduction;
    node.reduceOp = kind;
    Ints kept, reduced;
    for (size_t d = 0; d < src.sizes.size(); ++d)
      (std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) != dims.end() ? reduced : kept).push_back(src.sizes[d]);
    node.vars = loopVars(kept, "x");
    node.reduceVars = loopVars(reduced, "r");
    Index idx(src.sizes.size());
    size_t ki = 0, ri = 0;
    for (size_t d = 0; d < src.sizes.size(); ++d) {
      bool isReduced = std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) != dims.end();
      const LoopVar& v = isReduced ? node.reduceVars[ri++] : node.vars[ki++];
      idx[d] = IndexExpr::var(v.name, v.size);
    }
    node.body = src.loader(idx);
    node.output = newBuffer(dt, out);
    node.provenance = ProvenanceSet::merge(ProvenanceSet(n.provenance), src.inlinedProvenance()).ids();
    node.prims = src.prims;
    node.prims.push_back(n.op);
    node.scope = n.scope;
    addNode(std::move(node));
    return bufferValue(prog_.nodes.back().output, out, dt);
  }

  Lowered bufferValue(const std::string& name, const Ints& sizes, DType dt) {
    Lowered l;
    l.sizes = sizes;
    l.dtype = dt;
    Layout layout = Layout::contiguous(sizes);
    l.view = std::make_pair(name, layout);
    l.loader = stridedLoader(name, dt, layout);
    return l;
  }

  Lowered externNode(const Node& n, const std::string& op, const Ints& out, DType dt) {
    static const std::set<std::string> externs = {
        "matmul", "conv2d", "conv2d_backward_input", "conv2d_backward_weight", "max_pool2d", "avg_pool2d",
        "adaptive_avg_pool2d", "max_pool2d_backward", "avg_pool2d_backward", "adaptive_avg_pool2d_backward", "index_add"};
    if (!externs.count(op)) throw Error(describeNode(n) + ": the loop IR has no lowering for '" + n.op + "'");
    LoopNode node;
    node.kind = LoopNode::Kind::Extern;
    node.externOp = n.op;
    node.externAttrs = n.attrs;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      // matmul reads a transposed operand in place (transpose_a / transpose_b) instead of copying it.
      const Lowered& x = in(n, i);
      if (op == "matmul" && x.view && x.sizes.size() >= 2) {
        Ints swapped = x.sizes;
        std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
        Layout t = Layout::contiguous(swapped);
        std::swap(t.strides[t.strides.size() - 1], t.strides[t.strides.size() - 2]);
        if (x.view->second.strides == t.strides && x.view->second.offset == 0 && bufferNumel(x.view->first) == x.view->second.numel()) {
          node.externInputs.push_back(x.view->first);
          node.externInputSizes.push_back(swapped);
          node.externAttrs[i == 0 ? "transpose_a" : "transpose_b"] = true;
          continue;
        }
      }
      node.externInputs.push_back(realize(n.inputs[i]));
      node.externInputSizes.push_back(in(n, i).sizes);
    }
    node.vars = loopVars(out, "x");
    node.output = newBuffer(dt, out);
    node.provenance = n.provenance;
    node.prims = {n.op};
    node.scope = n.scope;
    addNode(std::move(node));
    return bufferValue(prog_.nodes.back().output, out, dt);
  }

  const Graph& g_;
  LoopProgram prog_;
  std::map<ValueId, Lowered> values_;
  std::map<ValueId, int> uses_;
  std::map<std::string, int64_t> bufferNumel_;  // prog_.buffer(name).layout.numel() without the scan
  int nextBuffer_ = 0;
};

}  // namespace

LoopProgram lower(const Graph& primGraph) { return Lowerer(primGraph).run(); }

}  // namespace fusebox

// Lowering of the prims that read data-dependent or piecewise coordinates: gather and
// index_select (indirect loads, the source inlined when it can be) and cat (a chain of selects
// on the coordinate, split into a tree of realized chunks when long).
#include <algorithm>

#include "core/loopir/lowerer.h"
#include "core/ops/op_schema.h"

namespace fusebox {

namespace {

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
  return LExpr::loadIndirect(e->buffer, e->dtype, base, step.constant(), extent, value);
}

// A gather inlines its source with every load of it reading at the index value: the tree is
// at most the source's size times the index's, as deep as both together.
void fitGather(Lowerer& L, const Node& n) {
  for (;;) {
    const Lowered &src = L.in(n, 0), &idx = L.in(n, 1);
    if (src.depth + idx.depth + 1 <= kMaxExprDepth && src.size * (idx.size + 1) + 1 <= kMaxExprNodes) return;
    if (idx.size > 1 || idx.depth > 1) L.shrink(n.inputs[1]);
    else if (src.size > 1 || src.depth > 1) L.shrink(n.inputs[0]);
    else return;
  }
}

// gather reads index[i] at each output element; index_select reads index[i[dim]].
Lowered lowerGather(Lowerer& L, const LoweringSite& s, bool isGather) {
  const Node& n = s.node;
  fitGather(L, n);
  int64_t d = AttrReader{n.attrs}.i("dim");
  Loader idx = L.in(n, 1).loader;
  auto indexValue = [=](const Index& i) { return isGather ? idx(i) : idx(Index{i[d]}); };
  // The source's element at the data-dependent coordinate: when every load of the source
  // uses that coordinate linearly, its loads become indirect and the source stays inlined
  // (a cross-entropy picks one log-probability per row without writing the whole tensor).
  Loader src = L.in(n, 0).loader;
  const int64_t extent = L.in(n, 0).sizes[d];
  // One placeholder per gather: a gather of a gather (cross_entropy of an embedding) must not
  // confuse the inner coordinate with the outer one.
  const IndexExpr picked = IndexExpr::var(kGatherVar + std::to_string(n.id), extent);
  auto inlined = [=](const Index& i) {
    Index j = i;
    j[d] = picked;
    return withIndirectCoordinate(src(j), picked, extent, indexValue(i));
  };
  if (inlined(Lowerer::indexOf(Lowerer::loopVars(s.out, "x")))) {
    Loader inl = [=](const Index& i) { return *inlined(i); };
    Lowered l = L.pointwise(n, s.out, s.dtype, inl);
    l.depth = L.in(n, 0).depth + L.in(n, 1).depth + 1;  // every load of the source reads at the index value
    l.size = L.in(n, 0).size * (L.in(n, 1).size + 1) + 1;
    return L.finishPointwise(n, l);
  }
  // Otherwise realize the source so its layout is known.
  std::string srcBuf = L.realize(n.inputs[0]);
  Ints srcStrides = Layout::contiguous(L.in(n, 0).sizes).strides;
  DType srcType = L.in(n, 0).dtype;
  return L.finishPointwise(n, L.pointwise(n, s.out, s.dtype, [=](const Index& i) {
    Index base = i;
    base[d] = IndexExpr(0);
    return LExpr::loadIndirect(srcBuf, srcType, linearIndex(base, srcStrides), srcStrides[d], extent, indexValue(i));
  }));
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
  l.prims.push_back({n.op, n.recomputed});
  l.opCount += 1;
  l.depth = maxDepth + static_cast<int>(parts.size()) + 2;
  l.loader = [starts, d](const Index& i) {
    LExprPtr result;
    for (size_t k = starts.size(); k-- > 0;) {
      Index j = i;
      j[d] = i[d] - IndexExpr(starts[k].first);
      LExprPtr v = starts[k].second(j);
      if (!result) {
        result = v;
        continue;
      }
      LExprPtr before = LExpr::binary(BinaryOp::Lt, LExpr::indexValue(i[d], DType::I64),
                                      LExpr::constant(static_cast<double>(starts[k + 1].first), DType::I64), DType::Bool);
      result = LExpr::where(before, v, result);
    }
    return result;
  };
  return l;
}

// Up to kCatChunk inputs: one select chain. More: chunks of kCatChunk consecutive inputs are
// realized as buffers, level by level, so no body holds more than kCatChunk parts.
Lowered lowerCat(Lowerer& L, const LoweringSite& s) {
  const Node& n = s.node;
  const int64_t d = AttrReader{n.attrs}.i("dim");
  const auto count = static_cast<int64_t>(n.inputs.size());
  const int64_t chunk = std::min<int64_t>(count, kCatChunk);
  // Each part gets an equal share of the limits, so any chunk of them fits.
  const int partDepth = kMaxExprDepth - static_cast<int>(chunk) - 2;
  const int64_t partSize = kMaxExprNodes / chunk - 4;
  if (count <= kCatChunk) L.fitInputs(n, Lowerer::allInputs(n), static_cast<int>(count) + 2, 4 * count);
  else
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (L.in(n, k).depth > partDepth || L.in(n, k).size > partSize) L.shrink(n.inputs[k]);
  std::vector<Lowered> parts;
  for (size_t k = 0; k < n.inputs.size(); ++k) parts.push_back(L.in(n, k));
  while (static_cast<int64_t>(parts.size()) > kCatChunk) {
    std::vector<Lowered> next;
    for (size_t b = 0; b < parts.size(); b += kCatChunk) {
      std::vector<Lowered> group(parts.begin() + b, parts.begin() + std::min(parts.size(), b + kCatChunk));
      if (group.size() == 1) {
        next.push_back(std::move(group[0]));
        continue;
      }
      Lowered l = catOf(n, group, d, s.dtype);
      L.realizeLowered(l, n.scope);
      next.push_back(std::move(l));
    }
    parts = std::move(next);
  }
  return L.finishPointwise(n, catOf(n, parts, d, s.dtype));
}

}  // namespace

void addGatherLowerings(LoweringTable& t) {
  t["gather"] = [](Lowerer& L, const LoweringSite& s) { return lowerGather(L, s, true); };
  t["index_select"] = [](Lowerer& L, const LoweringSite& s) { return lowerGather(L, s, false); };
  t["cat"] = lowerCat;
}

}  // namespace fusebox

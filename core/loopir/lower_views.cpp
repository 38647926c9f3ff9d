// Lowering of the view prims (broadcast_in_dim, reshape, permute, slice): index arithmetic in
// the loads of whoever reads them, never a copy. A view of a strided buffer stays one when its
// index map is affine in strides, so an extern can still take it in place.
#include "core/loopir/lowerer.h"
#include "core/ops/op_schema.h"

namespace fusebox {

namespace {

Lowered lowerBroadcast(Lowerer& L, const LoweringSite& s) {
  const Lowered& src = L.in(s.node, 0);
  const Ints& bd = AttrReader{s.node.attrs}.ints("broadcast_dimensions");
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
    l.sizes = s.out;
    l.strides.assign(s.out.size(), 0);
    l.offset = src.view->second.offset;
    for (size_t k = 0; k < bd.size(); ++k) l.strides[bd[k]] = srcSizes[k] == 1 ? 0 : src.view->second.strides[k];
    layout = l;
  }
  return L.viewOf(s.node, src, s.out, [x, map](const Index& i) { return x(map(i)); }, layout);
}

Lowered lowerReshape(Lowerer& L, const LoweringSite& s) {
  const Lowered& src = L.in(s.node, 0);
  Ints srcSizes = src.sizes;
  Loader x = src.loader;
  Ints outStrides = Layout::contiguous(s.out).strides;
  std::optional<Layout> layout;
  if (src.view && src.view->second.strides == Layout::contiguous(srcSizes).strides) {
    Layout l = Layout::contiguous(s.out);
    l.offset = src.view->second.offset;
    layout = l;
  }
  return L.viewOf(s.node, src, s.out, [x, srcSizes, outStrides](const Index& i) {
    return x(unflatten(linearIndex(i, outStrides), srcSizes));
  }, layout);
}

Lowered lowerPermute(Lowerer& L, const LoweringSite& s) {
  const Lowered& src = L.in(s.node, 0);
  Ints dims = AttrReader{s.node.attrs}.ints("dims");
  Loader x = src.loader;
  std::optional<Layout> layout;
  if (src.view) {
    Layout l;
    l.offset = src.view->second.offset;
    for (int64_t d : dims) l.sizes.push_back(src.view->second.sizes[d]), l.strides.push_back(src.view->second.strides[d]);
    layout = l;
  }
  return L.viewOf(s.node, src, s.out, [x, dims](const Index& i) {
    Index j(dims.size());
    for (size_t k = 0; k < dims.size(); ++k) j[dims[k]] = i[k];
    return x(j);
  }, layout);
}

Lowered lowerSlice(Lowerer& L, const LoweringSite& s) {
  const Lowered& src = L.in(s.node, 0);
  AttrReader a{s.node.attrs};
  int64_t d = a.i("dim"), start = a.i("start"), step = a.i("step");
  Loader x = src.loader;
  std::optional<Layout> layout;
  if (src.view) {
    Layout l = src.view->second;
    l.offset += start * l.strides[d];
    l.strides[d] *= step;
    l.sizes = s.out;
    layout = l;
  }
  return L.viewOf(s.node, src, s.out, [x, d, start, step](const Index& i) {
    Index j = i;
    j[d] = i[d] * IndexExpr(step) + IndexExpr(start);
    return x(j);
  }, layout);
}

// A view adds one level on top of its input: the input is fitted to the limits first.
LoweringRule fitted(Lowered (*rule)(Lowerer&, const LoweringSite&)) {
  return [rule](Lowerer& L, const LoweringSite& s) {
    L.fitInputs(s.node, Lowerer::allInputs(s.node), 1, 1);
    return rule(L, s);
  };
}

}  // namespace

void addViewLowerings(LoweringTable& t) {
  t["broadcast_in_dim"] = fitted(lowerBroadcast);
  t["reshape"] = fitted(lowerReshape);
  t["permute"] = fitted(lowerPermute);
  t["slice"] = fitted(lowerSlice);
}

}  // namespace fusebox

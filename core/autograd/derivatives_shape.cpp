// Derivatives of the shape ops: the inverse view of the gradient (a reshape back, the inverse
// permutation, a sum over expanded dims, a zero-padded slice, slices of a concatenation).
#include "core/autograd/derivative_rules.h"

#include <algorithm>

#include "core/ops/shape_rules.h"

namespace fusebox {

namespace {

using Ints = std::vector<int64_t>;

}  // namespace

void addShapeDerivatives(DerivativeTable& t) {
  for (const char* op : {"reshape", "view"})
    t[op] = [](GradContext& c) -> Grads { return {c.op("reshape", {c.grad()}, {{"shape", c.shape(c.in(0))}})}; };
  t["permute"] = [](GradContext& c) -> Grads {
    const Ints& dims = attrsOf(c).ints("dims");
    Ints inverse(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) inverse[normalizeAxis(dims[i], dims.size(), "permute")] = static_cast<int64_t>(i);
    return {c.op("permute", {c.grad()}, {{"dims", inverse}})};
  };
  t["transpose"] = [](GradContext& c) -> Grads { return {c.op("transpose", {c.grad()}, c.attrs())}; };
  t["expand"] = [](GradContext& c) -> Grads { return {c.sumTo(c.grad(), c.shape(c.in(0)))}; };
  t["slice"] = [](GradContext& c) -> Grads {
    AttrReader a = attrsOf(c);
    const Shape& xs = c.shape(c.in(0));
    int64_t d = normalizeAxis(a.i("dim"), xs.size(), "slice");
    if (!xs[d].isConstant()) return {c.grad()};  // only the full slice of a symbolic dim type-checks
    int64_t n = xs[d].value(), start = a.i("start");
    start = std::clamp(start < 0 ? start + n : start, int64_t{0}, n);
    return {c.op("slice_backward", {c.grad()},
                 {{"input_shape", xs}, {"dim", d}, {"start", start}, {"step", a.i("step")}})};
  };
  t["cat"] = [](GradContext& c) -> Grads {
    int64_t d = normalizeAxis(attrsOf(c).i("dim"), c.shape(c.out()).size(), "cat");
    Grads g(c.numInputs());
    int64_t offset = 0;
    for (size_t i = 0; i < c.numInputs(); ++i) {
      const Dim len = c.shape(c.in(i))[d];
      if (!len.isConstant()) throw ShapeError("cat: gradient along symbolic dimension " + len.str() + " is not supported");
      if (c.needs(i))
        g[i] = c.op("slice", {c.grad()}, {{"dim", d}, {"start", offset}, {"end", offset + len.value()}, {"step", int64_t{1}}});
      offset += len.value();
    }
    return g;
  };
}

}  // namespace fusebox

// Decompositions of the shape ops into the view prims (reshape, permute, broadcast_in_dim,
// slice), pad (a slice's gradient) and cat, with axes normalized.
#include "core/decompose/decomposer.h"

#include <algorithm>

namespace fusebox {

void addShapeDecompositions(DecompTable& t) {
  for (const char* op : {"reshape", "view"}) t[op] = [](Decomp& d) { return d.reshape(d.in(0), d.outType().shape); };
  t["permute"] = [](Decomp& d) {
    Ints dims;
    for (int64_t x : d.a().ints("dims")) dims.push_back(normalizeAxis(x, d.shape(d.in(0)).size(), "permute"));
    return d.p("permute", {d.in(0)}, {{"dims", dims}});
  };
  t["transpose"] = [](Decomp& d) {
    size_t rank = d.shape(d.in(0)).size();
    Ints perm;
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(i));
    std::swap(perm[normalizeAxis(d.a().i("dim0"), rank, "transpose")], perm[normalizeAxis(d.a().i("dim1"), rank, "transpose")]);
    return d.p("permute", {d.in(0)}, {{"dims", perm}});
  };
  t["expand"] = [](Decomp& d) { return d.bcast(d.in(0), d.outType().shape); };
  t["slice"] = [](Decomp& d) {
    const Shape& xs = d.shape(d.in(0));
    int64_t dim = normalizeAxis(d.a().i("dim"), xs.size(), "slice");
    if (d.outType().shape == xs && (!xs[dim].isConstant() || d.a().i("step") == 1)) return d.in(0);
    int64_t n = xs[dim].value(), step = d.a().i("step");
    auto clamp = [n](int64_t v) { return std::clamp(v < 0 ? v + n : v, int64_t{0}, n); };
    int64_t start = clamp(d.a().i("start")), end = std::max(clamp(d.a().i("end")), start);
    return d.p("slice", {d.in(0)}, {{"dim", dim}, {"start", start}, {"end", end}, {"step", step}});
  };
  t["slice_backward"] = [](Decomp& d) {
    const Shape& out = d.outType().shape;
    int64_t dim = normalizeAxis(d.a().i("dim"), out.size(), "slice_backward");
    if (!out[dim].isConstant()) return d.in(0);
    int64_t n = out[dim].value(), len = d.shape(d.in(0))[dim].value(), step = d.a().i("step");
    int64_t start = std::clamp(d.a().i("start") < 0 ? d.a().i("start") + n : d.a().i("start"), int64_t{0}, n);
    int64_t used = len == 0 ? 0 : (len - 1) * step + 1;
    return d.p("pad", {d.in(0)}, {{"dim", dim}, {"low", start}, {"high", n - start - used}, {"interior", step - 1}, {"value", 0.0}});
  };
  t["cat"] = [](Decomp& d) {
    std::vector<ValueId> ins;
    for (size_t i = 0; i < d.numInputs(); ++i) ins.push_back(d.in(i));
    return d.p("cat", ins, {{"dim", normalizeAxis(d.a().i("dim"), d.outType().shape.size(), "cat")}});
  };
}

}  // namespace fusebox

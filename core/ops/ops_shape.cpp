// View and layout ops: they change how elements are indexed, never their values.
#include <algorithm>
#include <climits>

#include "core/ops/registry.h"
#include "core/ops/shape_rules.h"

namespace fusebox {

namespace {

using Types = std::vector<TensorType>;

Types reshapeInfer(const InferCall& c) {
  return {{c.inputs[0].dtype, resolveReshape(c.inputs[0].shape, c.shape("shape"), c.op)}};
}

Shape permuted(const InferCall& c, const Shape& in, const std::vector<int64_t>& dims) {
  if (dims.size() != in.size())
    shapeFail(c.op, "permutation has " + std::to_string(dims.size()) + " dims but the input has rank " +
                        std::to_string(in.size()));
  Shape out;
  std::vector<bool> seen(in.size(), false);
  for (int64_t d : dims) {
    int64_t a = normalizeAxis(d, in.size(), c.op);
    if (seen[a]) shapeFail(c.op, "dimension " + std::to_string(d) + " appears twice in the permutation");
    seen[a] = true;
    out.push_back(in[a]);
  }
  return out;
}

}  // namespace

void registerShapeOps(OpRegistry& r) {
  r.add(OpSchema{"reshape", OpKind::View, {{"x"}}, false, {{"shape", AttrKind::Shape, std::nullopt}}, reshapeInfer,
                 "same elements, new sizes (one size may be -1)"});
  r.add(OpSchema{"view", OpKind::View, {{"x"}}, false, {{"shape", AttrKind::Shape, std::nullopt}}, reshapeInfer,
                 "alias of reshape (the IR is functional, so there is no aliasing difference)"});
  r.add(OpSchema{"permute", OpKind::View, {{"x"}}, false, {{"dims", AttrKind::Ints, std::nullopt}},
                 [](const InferCall& c) -> Types {
                   return {{c.inputs[0].dtype, permuted(c, c.inputs[0].shape, c.ints("dims"))}};
                 },
                 "reorder dimensions"});
  r.add(OpSchema{"transpose", OpKind::View, {{"x"}}, false,
                 {{"dim0", AttrKind::Int, std::nullopt}, {"dim1", AttrKind::Int, std::nullopt}},
                 [](const InferCall& c) -> Types {
                   Shape s = c.inputs[0].shape;
                   int64_t a = normalizeAxis(c.i("dim0"), s.size(), c.op), b = normalizeAxis(c.i("dim1"), s.size(), c.op);
                   std::swap(s[a], s[b]);
                   return {{c.inputs[0].dtype, s}};
                 },
                 "swap two dimensions"});
  r.add(OpSchema{"expand", OpKind::View, {{"x"}}, false, {{"shape", AttrKind::Shape, std::nullopt}},
                 [](const InferCall& c) -> Types {
                   const Shape& in = c.inputs[0].shape;
                   Shape out = c.shape("shape");
                   if (out.size() < in.size()) shapeFail(c.op, "cannot expand " + shapeStr(in) + " to fewer dims " + shapeStr(out));
                   size_t lead = out.size() - in.size();
                   for (size_t i = 0; i < out.size(); ++i) {
                     if (out[i] == Dim(-1)) {
                       if (i < lead) shapeFail(c.op, "-1 is not allowed for a new leading dimension");
                       out[i] = in[i - lead];
                     } else if (i >= lead && in[i - lead] != out[i] && in[i - lead] != Dim(1)) {
                       shapeFail(c.op, "cannot expand dimension " + std::to_string(i) + " of size " + in[i - lead].str() +
                                           " to " + out[i].str());
                     }
                   }
                   return {{c.inputs[0].dtype, out}};
                 },
                 "broadcast size-1 dims (and new leading dims) to a larger shape"});
  r.add(OpSchema{"slice", OpKind::View, {{"x"}}, false,
                 {{"dim", AttrKind::Int, Attr(int64_t{0})},
                  {"start", AttrKind::Int, Attr(int64_t{0})},
                  {"end", AttrKind::Int, Attr(int64_t{INT64_MAX})},
                  {"step", AttrKind::Int, Attr(int64_t{1})}},
                 [](const InferCall& c) -> Types {
                   Shape s = c.inputs[0].shape;
                   int64_t d = normalizeAxis(c.i("dim"), s.size(), c.op);
                   int64_t start = c.i("start"), end = c.i("end"), step = c.i("step");
                   if (step <= 0) shapeFail(c.op, "step must be positive");
                   if (!s[d].isConstant()) {
                     if (start == 0 && end == INT64_MAX && step == 1) return {c.inputs[0]};
                     shapeFail(c.op, "slicing symbolic dimension " + s[d].str() + " needs concrete sizes");
                   }
                   int64_t n = s[d].value();
                   auto clamp = [n](int64_t v) { return std::clamp(v < 0 ? v + n : v, int64_t{0}, n); };
                   start = clamp(start);
                   end = clamp(end);
                   s[d] = Dim(end > start ? (end - start - 1) / step + 1 : 0);  // no overflow for a huge step
                   return {{c.inputs[0].dtype, s}};
                 },
                 "x[start:end:step] along dim (negative indices count from the end)"});
  r.add(OpSchema{"cat", OpKind::View, {{"xs"}}, true, {{"dim", AttrKind::Int, Attr(int64_t{0})}},
                 [](const InferCall& c) -> Types {
                   const TensorType& first = c.inputs[0];
                   int64_t d = normalizeAxis(c.i("dim"), first.shape.size(), c.op);
                   Shape out = first.shape;
                   for (size_t i = 1; i < c.inputs.size(); ++i) {
                     const TensorType& t = c.inputs[i];
                     if (t.dtype != first.dtype) shapeFail(c.op, "dtype mismatch: " + first.str() + " vs " + t.str());
                     if (t.shape.size() != out.size()) shapeFail(c.op, "all inputs must have the same rank");
                     for (size_t k = 0; k < out.size(); ++k)
                       if (static_cast<int64_t>(k) != d && t.shape[k] != out[k])
                         shapeFail(c.op, "input " + std::to_string(i) + " " + shapeStr(t.shape) +
                                             " differs outside the cat dimension");
                     auto sum = out[d].plus(t.shape[d]);
                     if (!sum) shapeFail(c.op, "cannot add sizes " + out[d].str() + " and " + t.shape[d].str());
                     out[d] = *sum;
                   }
                   return {{first.dtype, out}};
                 },
                 "concatenate along dim"});
}

}  // namespace fusebox

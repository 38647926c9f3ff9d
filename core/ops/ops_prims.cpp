// The closed prim set of stage 3 (PrimTorch-style). Every prim name starts with "prims.".
// Prims are deliberately stricter than torch ops: elementwise prims need equal shapes (all
// broadcasting is an explicit prims.broadcast_in_dim), reductions drop their dims (no keepdim),
// views take fully resolved sizes. This is the list; each entry's summary is its semantics.
//
//   elementwise unary   neg abs exp log tanh sqrt rsqrt erf sin cos atan floor round (core/ops/unary_math.cpp)
//   elementwise binary  add sub mul div pow maximum minimum
//   comparisons         eq ne lt le gt ge                      (-> bool)
//   selection / cast    where convert_element_type
//   creation            full iota uniform_random sym_size
//   layout              broadcast_in_dim reshape permute slice pad cat
//   reductions          sum amax amin prod           (core/ops/reduction_math.def)
//   indexing            gather index_select index_add
//   externs             matmul conv2d conv2d_backward_input conv2d_backward_weight
//   windows             max_pool2d avg_pool2d adaptive_avg_pool2d
//                       max_pool2d_backward avg_pool2d_backward adaptive_avg_pool2d_backward
#include <algorithm>

#include "core/ir/checked_math.h"
#include "core/ops/binary_math.h"
#include "core/ops/extern_prims.h"
#include "core/ops/reduction_math.h"
#include "core/ops/registry.h"
#include "core/ops/shape_rules.h"
#include "core/ops/unary_math.h"

namespace fusebox {

namespace {

using Types = std::vector<TensorType>;

void requireEqualShapes(const InferCall& c) {
  for (size_t i = 1; i < c.inputs.size(); ++i)
    if (c.inputs[i].shape != c.inputs[0].shape)
      shapeFail(c.op, "prims need equal shapes (broadcast explicitly): " + shapeStr(c.inputs[0].shape) + " vs " +
                          shapeStr(c.inputs[i].shape));
}

DType dtypeAttr(const InferCall& c) {
  auto t = parseDType(c.s("dtype"));
  if (!t) shapeFail(c.op, "unknown dtype '" + c.s("dtype") + "'");
  return *t;
}

// A prim that reuses the shape rule of a torch op of the registry (after its own checks).
OpSchema primLike(OpRegistry& r, const std::string& torchOp, const std::string& summary, bool equalShapes) {
  const OpSchema* base = nullptr;
  for (const OpSchema& s : r.all())
    if (s.name == torchOp) base = &s;
  if (!base) throw std::logic_error("prim base op missing: " + torchOp);
  OpSchema p = *base;
  p.name = "prims." + torchOp;
  p.summary = summary;
  p.isPrim = true;
  InferFn inner = base->infer;
  p.infer = [inner, equalShapes](const InferCall& c) {
    if (equalShapes) requireEqualShapes(c);
    return inner(c);
  };
  return p;
}

OpSchema prim(const std::string& name, OpKind kind, std::vector<InputSpec> inputs, std::vector<AttrSpec> attrs,
              InferFn infer, const std::string& summary, bool variadic = false) {
  OpSchema s{"prims." + name, kind, std::move(inputs), variadic, std::move(attrs), std::move(infer), summary};
  s.isPrim = true;
  return s;
}

Types reduceInfer(const InferCall& c) {
  const TensorType& x = c.inputs[0];
  auto axes = reductionAxes(c.ints("dims"), x.shape.size(), c.op);
  if (c.ints("dims").empty() && !x.shape.empty()) shapeFail(c.op, "dims must be listed explicitly");
  return {{x.dtype, reducedShape(x.shape, axes, false)}};
}

}  // namespace

void registerPrims(OpRegistry& r) {
  std::vector<OpSchema> prims;
  for (const UnaryMath& u : unaryMathOps()) prims.push_back(primLike(r, u.name, "elementwise " + u.name, true));
  for (const BinaryMath& b : binaryMathOps())
    if (b.torchOp) prims.push_back(primLike(r, b.name, "elementwise " + b.name + " of equal-shape operands", true));
  prims.push_back(primLike(r, "where", "cond ? a : b, equal shapes", true));
  OpSchema cast = primLike(r, "to", "convert_element_type: value conversion to `dtype`", false);
  cast.name = "prims.convert_element_type";
  prims.push_back(cast);
  prims.push_back(primLike(r, "full", "a tensor of `shape` filled with `value`", false));
  OpSchema iota = primLike(r, "arange", "0, 1, ..., end-1", false);
  iota.name = "prims.iota";
  prims.push_back(iota);
  prims.push_back(primLike(r, "sym_size", "a scalar holding a size", false));
  prims.push_back(prim("uniform_random", OpKind::Random, {},
                       {{"shape", AttrKind::Shape, std::nullopt},
                        {"seed", AttrKind::Int, std::nullopt},
                        {"dtype", AttrKind::String, Attr(std::string("f32"))}},
                       [](const InferCall& c) -> Types { return {{dtypeAttr(c), c.shape("shape")}}; },
                       "counter-based uniform [0, 1) values: element i is hash(seed, i)"));
  prims.push_back(prim(
      "broadcast_in_dim", OpKind::View, {{"x"}},
      {{"shape", AttrKind::Shape, std::nullopt}, {"broadcast_dimensions", AttrKind::Ints, std::nullopt}},
      [](const InferCall& c) -> Types {
        const Shape& in = c.inputs[0].shape;
        const Shape& out = c.shape("shape");
        const auto& bd = c.ints("broadcast_dimensions");
        if (bd.size() != in.size()) shapeFail(c.op, "broadcast_dimensions must name one output dim per input dim");
        for (size_t i = 0; i < bd.size(); ++i) {
          if (bd[i] < 0 || bd[i] >= static_cast<int64_t>(out.size()) || (i > 0 && bd[i] <= bd[i - 1]))
            shapeFail(c.op, "broadcast_dimensions must be increasing output dims");
          if (in[i] != out[bd[i]] && in[i] != Dim(1))
            shapeFail(c.op, "input dim " + std::to_string(i) + " (" + in[i].str() + ") cannot broadcast to " + out[bd[i]].str());
        }
        return {{c.inputs[0].dtype, out}};
      },
      "x placed in `shape`: input dim i becomes output dim broadcast_dimensions[i]; other dims and size-1 dims repeat"));
  prims.push_back(prim("reshape", OpKind::View, {{"x"}}, {{"shape", AttrKind::Shape, std::nullopt}},
                       [](const InferCall& c) -> Types {
                         for (const Dim& d : c.shape("shape"))
                           if (d.isConstant() && d.value() < 0) shapeFail(c.op, "sizes must be resolved (no -1)");
                         return {{c.inputs[0].dtype, resolveReshape(c.inputs[0].shape, c.shape("shape"), c.op)}};
                       },
                       "same elements in row-major order, new sizes"));
  prims.push_back(primLike(r, "permute", "dims reordered: output dim d is input dim dims[d]", false));
  prims.push_back(prim("slice", OpKind::View, {{"x"}},
                       {{"dim", AttrKind::Int, std::nullopt},
                        {"start", AttrKind::Int, std::nullopt},
                        {"end", AttrKind::Int, std::nullopt},
                        {"step", AttrKind::Int, Attr(int64_t{1})}},
                       [](const InferCall& c) -> Types {
                         Shape s = c.inputs[0].shape;
                         int64_t d = normalizeAxis(c.i("dim"), s.size(), c.op);
                         int64_t start = c.i("start"), end = c.i("end"), step = c.i("step");
                         if (!s[d].isConstant()) shapeFail(c.op, "sliced dimension must be concrete");
                         if (start < 0 || end < start || end > s[d].value() || step <= 0)
                           shapeFail(c.op, "needs 0 <= start <= end <= size and step > 0");
                         s[d] = Dim(end > start ? (end - start - 1) / step + 1 : 0);  // no overflow for a huge step
                         return {{c.inputs[0].dtype, s}};
                       },
                       "elements start, start+step, ... < end along dim (indices already normalized)"));
  prims.push_back(prim("pad", OpKind::View, {{"x"}},
                       {{"dim", AttrKind::Int, std::nullopt},
                        {"low", AttrKind::Int, std::nullopt},
                        {"high", AttrKind::Int, std::nullopt},
                        {"interior", AttrKind::Int, Attr(int64_t{0})},
                        {"value", AttrKind::Float, Attr(0.0)}},
                       [](const InferCall& c) -> Types {
                         Shape s = c.inputs[0].shape;
                         int64_t d = normalizeAxis(c.i("dim"), s.size(), c.op);
                         if (!s[d].isConstant()) shapeFail(c.op, "padded dimension must be concrete");
                         int64_t n = s[d].value(), interior = c.i("interior");
                         if (c.i("low") < 0 || c.i("high") < 0 || interior < 0) shapeFail(c.op, "padding must be >= 0");
                         std::optional<int64_t> between = checkedMul(std::max<int64_t>(n - 1, 0), interior);
                         std::optional<int64_t> size = between ? checkedAdd(*between, n) : std::nullopt;
                         if (size) size = checkedAdd(*size, c.i("low"));
                         if (size) size = checkedAdd(*size, c.i("high"));
                         if (!size) shapeFail(c.op, "padded size overflows int64");
                         s[d] = Dim(*size);
                         return {{c.inputs[0].dtype, s}};
                       },
                       "`low` values before, `interior` between and `high` after the elements along dim"));
  prims.push_back(primLike(r, "cat", "concatenation along dim", false));
  for (const ReductionMath& red : reductionMathOps())
    prims.push_back(prim(red.prim, OpKind::Reduction, {{"x"}}, {{"dims", AttrKind::Ints, std::nullopt}}, reduceInfer,
                         red.prim + " over `dims`, which are removed"));
  prims.push_back(prim("gather", OpKind::Elementwise, {{"x"}, {"index"}}, {{"dim", AttrKind::Int, std::nullopt}},
                       [](const InferCall& c) -> Types {
                         if (!isInteger(c.inputs[1].dtype)) shapeFail(c.op, "index must be integer");
                         if (c.inputs[1].shape.size() != c.inputs[0].shape.size()) shapeFail(c.op, "index must have x's rank");
                         normalizeAxis(c.i("dim"), c.inputs[0].shape.size(), c.op);
                         return {{c.inputs[0].dtype, c.inputs[1].shape}};
                       },
                       "out[i][j] = x[i][index[i][j]] along dim (torch.gather)"));
  prims.push_back(prim("index_select", OpKind::Elementwise, {{"x"}, {"index"}}, {{"dim", AttrKind::Int, std::nullopt}},
                       [](const InferCall& c) -> Types {
                         if (!isInteger(c.inputs[1].dtype) || c.inputs[1].shape.size() != 1)
                           shapeFail(c.op, "index must be a 1-D integer tensor");
                         Shape s = c.inputs[0].shape;
                         s[normalizeAxis(c.i("dim"), s.size(), c.op)] = c.inputs[1].shape[0];
                         return {{c.inputs[0].dtype, s}};
                       },
                       "slices of x along dim picked by a 1-D index"));
  prims.push_back(prim("index_add", OpKind::Elementwise, {{"x"}, {"index"}, {"src"}}, {{"dim", AttrKind::Int, std::nullopt}},
                       [](const InferCall& c) -> Types {
                         if (!isInteger(c.inputs[1].dtype) || c.inputs[1].shape.size() != 1)
                           shapeFail(c.op, "index must be a 1-D integer tensor");
                         Shape expect = c.inputs[0].shape;
                         expect[normalizeAxis(c.i("dim"), expect.size(), c.op)] = c.inputs[1].shape[0];
                         if (c.inputs[2].shape != expect) shapeFail(c.op, "src must be " + shapeStr(expect));
                         return {c.inputs[0]};
                       },
                       "x with src slices added at the positions index names along dim (accumulating repeats)"));
  OpSchema mm = prim("matmul", OpKind::Matmul, {{"a"}, {"b"}}, {},
                     [](const InferCall& c) -> Types {
                       const Shape &a = c.inputs[0].shape, &b = c.inputs[1].shape;
                       if (a.size() < 2 || a.size() != b.size()) shapeFail(c.op, "operands need the same rank >= 2");
                       if (!std::equal(a.begin(), a.end() - 2, b.begin())) shapeFail(c.op, "batch dims must be equal");
                       if (a.back() != b[b.size() - 2]) shapeFail(c.op, "inner dims differ: " + shapeStr(a) + " @ " + shapeStr(b));
                       if (c.inputs[0].dtype != c.inputs[1].dtype || !isFloating(c.inputs[0].dtype)) shapeFail(c.op, "dtype mismatch");
                       Shape out = a;
                       out.back() = b.back();
                       return {{c.inputs[0].dtype, out}};
                     },
                     "batched [..., n, k] @ [..., k, m] with equal batch dims");
  prims.push_back(mm);
  // The convolution and pooling externs are prims of their torch ops' semantics (matmul and
  // index_add, written above, have their own).
  for (const ExternPrim& e : externPrims())
    if (e.kind != ExternKind::Matmul && e.kind != ExternKind::IndexAdd)
      prims.push_back(primLike(r, e.prim, e.prim + " (extern / window prim, same semantics as the torch op)", false));
  for (OpSchema& p : prims) r.add(std::move(p));
}

}  // namespace fusebox

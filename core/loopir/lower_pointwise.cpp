// Lowering of the elementwise prims: the unary and binary math tables, where, casts, constants,
// random numbers and pad. Each composes its inputs' loaders into one expression body.
#include "core/loopir/lowerer.h"
#include "core/ops/op_schema.h"

namespace fusebox {

namespace {

// The value of a node whose element i is `f(inputs' elements i)`, inputs fitted to the limits.
template <class F>
Lowered elementwise(Lowerer& L, const LoweringSite& s, F f) {
  L.fitInputs(s.node, Lowerer::allInputs(s.node), 1, 1);
  std::vector<Loader> xs;
  for (size_t i = 0; i < s.node.inputs.size(); ++i) xs.push_back(L.in(s.node, i).loader);
  DType dt = s.dtype;
  return L.finishPointwise(s.node, L.pointwise(s.node, s.out, dt, [xs, dt, f](const Index& i) { return f(xs, i, dt); }));
}

Lowered constantValue(Lowerer& L, const LoweringSite& s, double v) {
  DType dt = s.dtype;
  Lowered l = L.pointwise(s.node, s.out, dt, [v, dt](const Index&) { return LExpr::constant(v, dt); });
  l.constant = true;
  return l;
}

Lowered lowerIota(Lowerer& L, const LoweringSite& s) {
  DType dt = s.dtype;
  Lowered l = L.pointwise(s.node, s.out, dt, [dt](const Index& i) { return LExpr::indexValue(i[0], dt); });
  l.constant = true;
  return l;
}

Lowered lowerUniformRandom(Lowerer& L, const LoweringSite& s) {
  int64_t seed = AttrReader{s.node.attrs}.i("seed");
  Ints strides = Layout::contiguous(s.out).strides;
  DType dt = s.dtype;
  return L.finishPointwise(s.node, L.pointwise(s.node, s.out, dt, [seed, strides, dt](const Index& i) {
    auto e = std::make_shared<LExpr>();
    e->kind = LExpr::Kind::Random;
    e->dtype = dt;
    e->seed = seed;
    e->index = linearIndex(i, strides);
    return LExprPtr(e);
  }));
}

// where(low <= i < high and (i - low) % stride == 0, x[(i - low) / stride], value) along `dim`.
Lowered lowerPad(Lowerer& L, const LoweringSite& s) {
  const Node& n = s.node;
  L.fitInputs(n, {0}, 5, 13);  // where(and(and(ge, lt), eq), x, value) over index values
  AttrReader a{n.attrs};
  const Lowered& src = L.in(n, 0);
  int64_t d = a.i("dim"), low = a.i("low"), stride = a.i("interior") + 1, len = src.sizes[d];
  double value = a.f("value");
  Loader x = src.loader;
  DType dt = s.dtype;
  return L.finishPointwise(n, L.pointwise(n, s.out, dt, [x, d, low, stride, len, value, dt](const Index& i) {
    IndexExpr rel = i[d] - IndexExpr(low);
    auto idx = [&](const IndexExpr& e) { return LExpr::indexValue(e, DType::I64); };
    auto cmp = [&](BinaryOp o, LExprPtr l, int64_t r) { return LExpr::binary(o, l, LExpr::constant(r, DType::I64), DType::Bool); };
    LExprPtr valid = LExpr::binary(BinaryOp::And, cmp(BinaryOp::Ge, idx(rel), 0), cmp(BinaryOp::Lt, idx(rel), (len - 1) * stride + 1),
                                   DType::Bool);
    if (stride > 1) valid = LExpr::binary(BinaryOp::And, valid, cmp(BinaryOp::Eq, idx(rel.mod(stride)), 0), DType::Bool);
    Index j = i;
    j[d] = stride > 1 ? rel.floorDiv(stride) : rel;
    return LExpr::where(valid, x(j), LExpr::constant(value, dt));
  }));
}

}  // namespace

void addPointwiseLowerings(LoweringTable& t) {
  for (const UnaryMath& u : unaryMathOps())
    t[u.name] = [op = u.op](Lowerer& L, const LoweringSite& s) {
      return elementwise(L, s, [op](const std::vector<Loader>& x, const Index& i, DType dt) { return LExpr::unary(op, x[0](i), dt); });
    };
  for (const BinaryMath& b : binaryMathOps())
    if (b.torchOp)
      t[b.name] = [op = b.op](Lowerer& L, const LoweringSite& s) {
        return elementwise(L, s, [op](const std::vector<Loader>& x, const Index& i, DType dt) {
          return LExpr::binary(op, x[0](i), x[1](i), dt);
        });
      };
  t["where"] = [](Lowerer& L, const LoweringSite& s) {
    return elementwise(L, s, [](const std::vector<Loader>& x, const Index& i, DType) { return LExpr::where(x[0](i), x[1](i), x[2](i)); });
  };
  t["convert_element_type"] = [](Lowerer& L, const LoweringSite& s) {
    return elementwise(L, s, [](const std::vector<Loader>& x, const Index& i, DType dt) { return LExpr::cast(x[0](i), dt); });
  };
  t["full"] = [](Lowerer& L, const LoweringSite& s) { return constantValue(L, s, AttrReader{s.node.attrs}.f("value")); };
  t["sym_size"] = [](Lowerer& L, const LoweringSite& s) {
    return constantValue(L, s, static_cast<double>(AttrReader{s.node.attrs}.dim("size").value()));
  };
  t["iota"] = lowerIota;
  t["uniform_random"] = lowerUniformRandom;
  t["pad"] = lowerPad;
}

}  // namespace fusebox

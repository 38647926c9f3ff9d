#include "core/codegen/extern_call.h"

#include <tuple>

#include "core/ir/error.h"
#include "core/ops/op_schema.h"

namespace fusebox {

namespace {

using Ints = std::vector<int64_t>;

// A (h, w) pair attribute: one value for both, two values, or `fallback` when absent or empty.
std::pair<int64_t, int64_t> pairAttr(const AttrReader& a, const char* name, const Ints& fallback) {
  Ints v = a.attrs.count(name) && !a.ints(name).empty() ? a.ints(name) : fallback;
  return v.size() == 1 ? std::make_pair(v[0], v[0]) : std::make_pair(v[0], v[1]);
}

void describeMatmul(ExternCall& c, const AttrReader& a, Ints sa, Ints sb) {
  c.transA = a.attrs.count("transpose_a") > 0;
  c.transB = a.attrs.count("transpose_b") > 0;
  if (c.transA) std::swap(sa[sa.size() - 1], sa[sa.size() - 2]);
  if (c.transB) std::swap(sb[sb.size() - 1], sb[sb.size() - 2]);
  c.n = sa[sa.size() - 2], c.k = sa.back(), c.m = sb.back();
  c.batch = c.elements / (c.n * c.m);
}

// Inputs and output name x (the image), w (the weight) and y (the result) by the op's role.
void describeConv(ExternCall& c, const AttrReader& a, const Ints& in0, const Ints& in1, const Ints& out) {
  Ints x, w, y;
  if (c.kind == ExternKind::Conv2d) x = in0, w = in1, y = out;
  else if (c.kind == ExternKind::Conv2dInputGrad) x = out, w = in1, y = in0;
  else x = in0, w = out, y = in1;
  auto [sh, sw] = pairAttr(a, "stride", {1});
  auto [ph, pw] = pairAttr(a, "padding", {0});
  auto [dh, dw] = pairAttr(a, "dilation", {1});
  c.fields = {x[0], x[1], x[2], x[3], w[0], w[2], w[3], y[2], y[3], a.i("groups"), sh, sw, ph, pw, dh, dw};
  c.rows = c.kind == ExternKind::Conv2d ? x[0] * w[0] : c.kind == ExternKind::Conv2dInputGrad ? x[0] * x[1] : w[0] * w[1];
}

// x is the pooled image, y the pooled result; a gradient reads y's gradient and writes x's.
void describePool(ExternCall& c, const AttrReader& a, const Ints& in0, const Ints& out) {
  const bool grad = c.prim->gradient;
  Ints x = grad ? out : in0, y = grad ? in0 : out;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  if (c.prim->pool != PoolWindow::AdaptiveAvg) {
    std::tie(kh, kw) = pairAttr(a, "kernel_size", {});
    std::tie(sh, sw) = pairAttr(a, "stride", a.ints("kernel_size"));
    std::tie(ph, pw) = pairAttr(a, "padding", {0});
  }
  c.fields = {x[0] * x[1], x[2], x[3], y[2], y[3], kh, kw, sh, sw, ph, pw};
  c.rows = x[0] * x[1];
}

void describeIndexAdd(ExternCall& c, const AttrReader& a, const Ints& xs, const Ints& index) {
  int64_t dim = a.i("dim"), outer = 1, inner = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(xs.size()); ++d)
    if (d < dim) outer *= xs[d];
    else if (d > dim) inner *= xs[d];
  c.fields = {outer, xs[dim], index[0], inner};
  c.rows = 1;
}

}  // namespace

int ExternCall::poolMode() const {
  int window = prim->pool == PoolWindow::Max ? 0 : prim->pool == PoolWindow::Avg ? 1 : 2;
  return window + (prim->gradient ? 10 : 0);
}

int64_t ExternCall::flops() const {
  double f = 0;  // in double: an estimate, never an overflow
  if (kind == ExternKind::Matmul) {
    f = 2.0 * batch * n * k * m;
  } else if (kind == ExternKind::Conv2d || kind == ExternKind::Conv2dInputGrad || kind == ExternKind::Conv2dWeightGrad) {
    const std::vector<int64_t>& v = fields;  // N C H W O KH KW OH OW groups ...
    if (v.size() >= 10 && v[9] > 0) f = 2.0 * v[0] * v[4] * v[7] * v[8] * (static_cast<double>(v[1]) / v[9]) * v[5] * v[6];
  }
  return f > 9e18 ? int64_t{9000000000000000000} : static_cast<int64_t>(f);
}

ExternCall describeExtern(const LoopProgram& p, const LoopNode& n) {
  ExternCall c;
  c.prim = &externPrim(n.externOp);
  c.kind = c.prim->kind;
  c.inputs = n.externInputs;
  c.output = n.output;
  for (size_t i = 0; i < n.externInputs.size(); ++i)
    if (p.buffer(n.externInputs[i]).dtype != DType::F32 && c.prim->integerInput != static_cast<int>(i))
      throw Error("extern " + c.prim->prim + " supports f32 only, got " + std::string(dtypeName(p.buffer(n.externInputs[i]).dtype)));
  c.elements = p.buffer(n.output).layout.numel();
  AttrReader a{n.externAttrs};
  auto dims = [&](size_t i) { return n.externInputSizes.at(i); };
  const Ints& out = p.buffer(n.output).layout.sizes;
  switch (c.kind) {
    case ExternKind::Matmul: describeMatmul(c, a, dims(0), dims(1)); break;
    case ExternKind::Conv2d:
    case ExternKind::Conv2dInputGrad:
    case ExternKind::Conv2dWeightGrad: describeConv(c, a, dims(0), dims(1), out); break;
    case ExternKind::Pool: describePool(c, a, dims(0), out); break;
    case ExternKind::IndexAdd: describeIndexAdd(c, a, dims(0), dims(1)); break;
  }
  return c;
}

}  // namespace fusebox

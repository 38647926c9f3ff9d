#include "core/codegen/extern_call.h"

#include <tuple>

#include "core/ir/error.h"
#include "core/ops/op_schema.h"

namespace fusebox {

ExternCall describeExtern(const LoopProgram& p, const LoopNode& n) {
  ExternCall c;
  c.op = n.externOp.substr(6);
  c.inputs = n.externInputs;
  c.output = n.output;
  AttrReader a{n.externAttrs};
  auto dims = [&](size_t i) { return n.externInputSizes.at(i); };
  const std::vector<int64_t>& out = p.buffer(n.output).layout.sizes;
  auto pair = [&](const char* name, const std::vector<int64_t>& fallback) {
    std::vector<int64_t> v = a.attrs.count(name) && !a.ints(name).empty() ? a.ints(name) : fallback;
    return v.size() == 1 ? std::make_pair(v[0], v[0]) : std::make_pair(v[0], v[1]);
  };
  for (size_t i = 0; i < n.externInputs.size(); ++i)
    if (p.buffer(n.externInputs[i]).dtype != DType::F32 && !(c.op == "index_add" && i == 1))
      throw Error("extern " + c.op + " supports f32 only, got " + std::string(dtypeName(p.buffer(n.externInputs[i]).dtype)));
  c.elements = p.buffer(n.output).layout.numel();
  if (c.op == "matmul") {
    c.kind = ExternCall::Kind::Matmul;
    c.transA = a.attrs.count("transpose_a") > 0;
    c.transB = a.attrs.count("transpose_b") > 0;
    std::vector<int64_t> sa = dims(0), sb = dims(1);
    if (c.transA) std::swap(sa[sa.size() - 1], sa[sa.size() - 2]);
    if (c.transB) std::swap(sb[sb.size() - 1], sb[sb.size() - 2]);
    c.n = sa[sa.size() - 2], c.k = sa.back(), c.m = sb.back();
    c.batch = c.elements / (c.n * c.m);
  } else if (c.op == "conv2d" || c.op == "conv2d_backward_input" || c.op == "conv2d_backward_weight") {
    std::vector<int64_t> x, w, y;
    if (c.op == "conv2d") x = dims(0), w = dims(1), y = out, c.kind = ExternCall::Kind::Conv2d;
    else if (c.op == "conv2d_backward_input") x = out, w = dims(1), y = dims(0), c.kind = ExternCall::Kind::Conv2dInputGrad;
    else x = dims(0), w = out, y = dims(1), c.kind = ExternCall::Kind::Conv2dWeightGrad;
    auto [sh, sw] = pair("stride", {1});
    auto [ph, pw] = pair("padding", {0});
    auto [dh, dw] = pair("dilation", {1});
    c.fields = {x[0], x[1], x[2], x[3], w[0], w[2], w[3], y[2], y[3], a.i("groups"), sh, sw, ph, pw, dh, dw};
    c.rows = c.kind == ExternCall::Kind::Conv2d ? x[0] * w[0] : c.kind == ExternCall::Kind::Conv2dInputGrad ? x[0] * x[1] : w[0] * w[1];
  } else if (c.op.find("pool2d") != std::string::npos) {
    c.kind = ExternCall::Kind::Pool;
    bool grad = c.op.find("_backward") != std::string::npos;
    c.poolMode = (c.op.rfind("max", 0) == 0 ? 0 : c.op.rfind("avg", 0) == 0 ? 1 : 2) + (grad ? 10 : 0);
    std::vector<int64_t> x = grad ? out : dims(0), y = grad ? dims(0) : out;
    int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
    if (c.poolMode % 10 != 2) {
      std::tie(kh, kw) = pair("kernel_size", {});
      std::tie(sh, sw) = pair("stride", a.ints("kernel_size"));
      std::tie(ph, pw) = pair("padding", {0});
    }
    c.fields = {x[0] * x[1], x[2], x[3], y[2], y[3], kh, kw, sh, sw, ph, pw};
    c.rows = x[0] * x[1];
  } else if (c.op == "index_add") {
    c.kind = ExternCall::Kind::IndexAdd;
    std::vector<int64_t> xs = dims(0);
    int64_t dim = a.i("dim"), outer = 1, inner = 1;
    for (int64_t d = 0; d < static_cast<int64_t>(xs.size()); ++d)
      if (d < dim) outer *= xs[d];
      else if (d > dim) inner *= xs[d];
    c.fields = {outer, xs[dim], dims(1)[0], inner};
    c.rows = 1;
  } else {
    throw Error("no extern implementation for " + n.externOp);
  }
  return c;
}

}  // namespace fusebox

// Neural-network ops: matmuls, normalization, convolution, pooling, embedding, losses.
#include "core/ops/registry.h"
#include "core/ops/shape_rules.h"

namespace fusebox {

namespace {

using Types = std::vector<TensorType>;

void requireFloatInputs(const InferCall& c) {
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (!isFloating(c.inputs[i].dtype))
      shapeFail(c.op, "input " + std::to_string(i) + " must be floating point, got " + c.inputs[i].str());
  for (size_t i = 1; i < c.inputs.size(); ++i)
    if (c.inputs[i].dtype != c.inputs[0].dtype)
      shapeFail(c.op, "dtype mismatch: " + c.inputs[0].str() + " vs " + c.inputs[i].str());
}

void requireRank(const InferCall& c, size_t i, size_t rank, const char* what) {
  if (c.inputs[i].shape.size() != rank)
    shapeFail(c.op, std::string(what) + " must have rank " + std::to_string(rank) + ", got " + c.inputs[i].str());
}

void requireDim(const InferCall& c, const Dim& have, const Dim& want, const std::string& what) {
  if (have != want) shapeFail(c.op, what + " is " + have.str() + " but " + want.str() + " was expected");
}

int64_t concreteDim(const InferCall& c, const Dim& d, const char* what) {
  if (!d.isConstant()) shapeFail(c.op, std::string(what) + " must be a concrete size, got " + d.str());
  return d.value();
}

Shape matmulShape(const InferCall& c) {
  Shape a = c.inputs[0].shape, b = c.inputs[1].shape;
  if (a.empty() || b.empty()) shapeFail(c.op, "operands must have at least one dimension");
  bool aVec = a.size() == 1, bVec = b.size() == 1;
  if (aVec) a.insert(a.begin(), Dim(1));
  if (bVec) b.push_back(Dim(1));
  requireDim(c, b[b.size() - 2], a.back(),
             "inner dimension of " + shapeStr(c.inputs[0].shape) + " @ " + shapeStr(c.inputs[1].shape) + ": rhs");
  Shape batchA(a.begin(), a.end() - 2), batchB(b.begin(), b.end() - 2);
  Shape out = broadcastShapes(batchA, batchB, c.op);
  if (!aVec) out.push_back(a[a.size() - 2]);
  if (!bVec) out.push_back(b.back());
  return out;
}

// Pool/conv attributes of length 1 apply to both spatial dims.
std::pair<int64_t, int64_t> pair2(const InferCall& c, const std::string& attr, const std::vector<int64_t>& fallback) {
  std::vector<int64_t> v = c.ints(attr).empty() ? fallback : c.ints(attr);
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() != 2) shapeFail(c.op, "'" + attr + "' must have 1 or 2 values");
  return {v[0], v[1]};
}

Types poolInfer(const InferCall& c) {
  requireFloatInputs(c);
  requireRank(c, 0, 4, "input (N, C, H, W)");
  const Shape& x = c.inputs[0].shape;
  auto [kh, kw] = pair2(c, "kernel_size", {});
  auto [sh, sw] = pair2(c, "stride", c.ints("kernel_size"));
  auto [ph, pw] = pair2(c, "padding", {0});
  if (ph < 0 || pw < 0 || ph > kh / 2 || pw > kw / 2) shapeFail(c.op, "padding must be at most half the kernel size");
  int64_t h = windowOutputSize(concreteDim(c, x[2], "H"), kh, sh, ph, 1, c.op);
  int64_t w = windowOutputSize(concreteDim(c, x[3], "W"), kw, sw, pw, 1, c.op);
  return {{c.inputs[0].dtype, Shape{x[0], x[1], Dim(h), Dim(w)}}};
}

const std::vector<AttrSpec> kPoolAttrs = {{"kernel_size", AttrKind::Ints, std::nullopt},
                                          {"stride", AttrKind::Ints, Attr(std::vector<int64_t>{})},
                                          {"padding", AttrKind::Ints, Attr(std::vector<int64_t>{0})}};

}  // namespace

void registerNNOps(OpRegistry& r) {
  r.add(OpSchema{"linear", OpKind::Matmul, {{"x"}, {"weight"}, {"bias", true}}, false, {},
                 [](const InferCall& c) -> Types {
                   requireFloatInputs(c);
                   const Shape& x = c.inputs[0].shape;
                   requireRank(c, 1, 2, "weight (out_features, in_features)");
                   const Shape& w = c.inputs[1].shape;
                   if (x.empty()) shapeFail(c.op, "input must have at least one dimension");
                   requireDim(c, x.back(), w[1], "input feature size (last dim of " + shapeStr(x) + ")");
                   if (c.inputs.size() == 3 && c.inputs[2].shape != Shape{w[0]})
                     shapeFail(c.op, "bias must be [" + w[0].str() + "], got " + shapeStr(c.inputs[2].shape));
                   Shape out = x;
                   out.back() = w[0];
                   return {{c.inputs[0].dtype, out}};
                 },
                 "x @ weight^T + bias"});
  r.add(OpSchema{"matmul", OpKind::Matmul, {{"a"}, {"b"}}, false, {},
                 [](const InferCall& c) -> Types {
                   requireFloatInputs(c);
                   return {{c.inputs[0].dtype, matmulShape(c)}};
                 },
                 "matrix product with torch.matmul's broadcasting rules"});
  r.add(OpSchema{"bmm", OpKind::Matmul, {{"a"}, {"b"}}, false, {},
                 [](const InferCall& c) -> Types {
                   requireFloatInputs(c);
                   requireRank(c, 0, 3, "lhs (batch, n, k)");
                   requireRank(c, 1, 3, "rhs (batch, k, m)");
                   const Shape &a = c.inputs[0].shape, &b = c.inputs[1].shape;
                   requireDim(c, b[0], a[0], "rhs batch size");
                   requireDim(c, b[1], a[2], "rhs rows");
                   return {{c.inputs[0].dtype, Shape{a[0], a[1], b[2]}}};
                 },
                 "batched matrix product [b,n,k] @ [b,k,m]"});
  r.add(OpSchema{"layer_norm", OpKind::Norm, {{"x"}, {"weight", true}, {"bias", true}}, false,
                 {{"normalized_shape", AttrKind::Ints, std::nullopt}, {"eps", AttrKind::Float, Attr(1e-5)}},
                 [](const InferCall& c) -> Types {
                   requireFloatInputs(c);
                   const Shape& x = c.inputs[0].shape;
                   const auto& ns = c.ints("normalized_shape");
                   if (ns.empty() || ns.size() > x.size()) shapeFail(c.op, "normalized_shape must have 1..rank dims");
                   Shape tail(x.end() - static_cast<long>(ns.size()), x.end());
                   if (tail != shapeOf(ns))
                     shapeFail(c.op, "normalized_shape " + shapeStr(shapeOf(ns)) + " does not match the trailing dims of " +
                                         shapeStr(x));
                   for (size_t i = 1; i < c.inputs.size(); ++i)
                     if (c.inputs[i].shape != shapeOf(ns))
                       shapeFail(c.op, std::string(i == 1 ? "weight" : "bias") + " must be " + shapeStr(shapeOf(ns)) +
                                           ", got " + shapeStr(c.inputs[i].shape));
                   return {c.inputs[0]};
                 },
                 "(x - mean) / sqrt(var + eps) * weight + bias over the trailing dims"});
  r.add(OpSchema{"batch_norm", OpKind::Norm,
                 {{"x"}, {"weight"}, {"bias"}, {"running_mean"}, {"running_var"}}, false,
                 {{"training", AttrKind::Bool, Attr(false)},
                  {"momentum", AttrKind::Float, Attr(0.1)},
                  {"eps", AttrKind::Float, Attr(1e-5)}},
                 [](const InferCall& c) -> Types {
                   requireFloatInputs(c);
                   const Shape& x = c.inputs[0].shape;
                   if (x.size() < 2) shapeFail(c.op, "input must be (N, C, ...), got " + shapeStr(x));
                   static const char* names[] = {"", "weight", "bias", "running_mean", "running_var"};
                   for (size_t i = 1; i < 5; ++i)
                     if (c.inputs[i].shape != Shape{x[1]})
                       shapeFail(c.op, std::string(names[i]) + " must be [" + x[1].str() + "], got " +
                                           shapeStr(c.inputs[i].shape));
                   return {c.inputs[0]};
                 },
                 "per-channel normalization: batch statistics when training, running statistics otherwise"});
  r.add(OpSchema{"conv2d", OpKind::Conv, {{"x"}, {"weight"}, {"bias", true}}, false,
                 {{"stride", AttrKind::Ints, Attr(std::vector<int64_t>{1})},
                  {"padding", AttrKind::Ints, Attr(std::vector<int64_t>{0})},
                  {"dilation", AttrKind::Ints, Attr(std::vector<int64_t>{1})},
                  {"groups", AttrKind::Int, Attr(int64_t{1})}},
                 [](const InferCall& c) -> Types {
                   requireFloatInputs(c);
                   requireRank(c, 0, 4, "input (N, C, H, W)");
                   requireRank(c, 1, 4, "weight (O, C/groups, kH, kW)");
                   const Shape &x = c.inputs[0].shape, &w = c.inputs[1].shape;
                   int64_t groups = c.i("groups");
                   int64_t cin = concreteDim(c, x[1], "input channels");
                   int64_t cout = concreteDim(c, w[0], "output channels");
                   if (groups <= 0 || cin % groups || cout % groups) shapeFail(c.op, "channels must divide by groups");
                   requireDim(c, w[1], Dim(cin / groups), "weight input channels");
                   if (c.inputs.size() == 3 && c.inputs[2].shape != Shape{w[0]})
                     shapeFail(c.op, "bias must be [" + w[0].str() + "], got " + shapeStr(c.inputs[2].shape));
                   auto [sh, sw] = pair2(c, "stride", {});
                   auto [ph, pw] = pair2(c, "padding", {});
                   auto [dh, dw] = pair2(c, "dilation", {});
                   int64_t h = windowOutputSize(concreteDim(c, x[2], "H"), concreteDim(c, w[2], "kH"), sh, ph, dh, c.op);
                   int64_t wd = windowOutputSize(concreteDim(c, x[3], "W"), concreteDim(c, w[3], "kW"), sw, pw, dw, c.op);
                   return {{c.inputs[0].dtype, Shape{x[0], w[0], Dim(h), Dim(wd)}}};
                 },
                 "2-D convolution (cross-correlation), NCHW"});
  r.add(OpSchema{"max_pool2d", OpKind::Pool, {{"x"}}, false, kPoolAttrs, poolInfer, "max over 2-D windows"});
  r.add(OpSchema{"avg_pool2d", OpKind::Pool, {{"x"}}, false, kPoolAttrs, poolInfer,
                 "mean over 2-D windows (padding counted, like count_include_pad=True)"});
  r.add(OpSchema{"adaptive_avg_pool2d", OpKind::Pool, {{"x"}}, false,
                 {{"output_size", AttrKind::Ints, std::nullopt}},
                 [](const InferCall& c) -> Types {
                   requireFloatInputs(c);
                   requireRank(c, 0, 4, "input (N, C, H, W)");
                   auto [oh, ow] = pair2(c, "output_size", {});
                   const Shape& x = c.inputs[0].shape;
                   concreteDim(c, x[2], "H");
                   concreteDim(c, x[3], "W");
                   if (oh <= 0 || ow <= 0) shapeFail(c.op, "output_size must be positive");
                   return {{c.inputs[0].dtype, Shape{x[0], x[1], Dim(oh), Dim(ow)}}};
                 },
                 "mean over windows chosen so the output has output_size"});
  r.add(OpSchema{"embedding", OpKind::Elementwise, {{"indices"}, {"weight"}}, false, {},
                 [](const InferCall& c) -> Types {
                   if (!isInteger(c.inputs[0].dtype)) shapeFail(c.op, "indices must be i64 or i32, got " + c.inputs[0].str());
                   // any dtype: ONNX Gather of an integer shape (Shape -> Gather) is one too; only a floating
                   // weight gets a gradient (autograd differentiates floating values)
                   requireRank(c, 1, 2, "weight (num_embeddings, dim)");
                   Shape out = c.inputs[0].shape;
                   out.push_back(c.inputs[1].shape[1]);
                   return {{c.inputs[1].dtype, out}};
                 },
                 "rows of weight gathered by indices"});
  r.add(OpSchema{"cross_entropy", OpKind::Loss, {{"logits"}, {"target"}}, false, {},
                 [](const InferCall& c) -> Types {
                   if (!isFloating(c.inputs[0].dtype)) shapeFail(c.op, "logits must be floating point");
                   if (!isInteger(c.inputs[1].dtype)) shapeFail(c.op, "target must hold class indices (i64/i32), got " + c.inputs[1].str());
                   requireRank(c, 0, 2, "logits (N, C)");
                   requireRank(c, 1, 1, "target (N)");
                   requireDim(c, c.inputs[1].shape[0], c.inputs[0].shape[0], "target batch size");
                   return {{c.inputs[0].dtype, Shape{}}};
                 },
                 "mean over the batch of -log_softmax(logits)[target]"});
  r.add(OpSchema{"mse_loss", OpKind::Loss, {{"input"}, {"target"}}, false, {},
                 [](const InferCall& c) -> Types {
                   requireFloatInputs(c);
                   if (c.inputs[0].shape != c.inputs[1].shape)
                     shapeFail(c.op, "input " + shapeStr(c.inputs[0].shape) + " and target " + shapeStr(c.inputs[1].shape) +
                                         " must have the same shape");
                   return {{c.inputs[0].dtype, Shape{}}};
                 },
                 "mean((input - target)^2)"});
}

}  // namespace fusebox

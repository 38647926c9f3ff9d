// ONNX neural-network ops as registry ops: Gemm, global pooling, normalizations, softmax family,
// arg max/min and the two losses (convolution and windowed pooling: onnx_ops_window.cpp).

#include <cmath>
#include <optional>

#include "core/frontend/onnx/onnx_ops.h"
#include "core/ir/error.h"

namespace fusebox {

namespace {

using Ints = std::vector<int64_t>;

ValueId axisReduce(OnnxNode& c, const char* op, ValueId x, Ints axes, bool keepdim = true) {
  return c.emit(op, {x}, {{"dim", axes}, {"keepdim", keepdim}});
}

Ints tailAxes(size_t from, size_t rank) {
  Ints a;
  for (size_t i = from; i < rank; ++i) a.push_back(static_cast<int64_t>(i));
  return a;
}

// Softmax-like ops: opset < 13 normalizes over the dims from `axis` on, flattened.
OnnxImporter overAxis(std::function<ValueId(OnnxNode&, ValueId, int64_t)> f) {
  return [f](OnnxNode& c) -> OnnxOutputs {
    ValueId x = c.in(0);
    Ints s = c.sizes(x);
    int64_t rank = static_cast<int64_t>(s.size());
    int64_t axis = c.axis(c.attrInt("axis", c.cx.opset >= 13 ? -1 : 1), s.size());
    if (c.cx.opset >= 13 || axis == rank - 1) return {f(c, x, axis)};
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= s[static_cast<size_t>(i)];
    return {c.reshape(f(c, c.reshape(x, {outer, inner}), 1), s)};
  };
}

// The first (or last) index of the max (or min) along axis, keepdim, as f32 positions.
ValueId argExtreme(OnnxNode& c, ValueId x, int64_t axis, bool max, bool last) {
  DType t = isFloating(c.dtype(x)) ? c.dtype(x) : DType::F64;
  x = c.cast(x, t);
  size_t r = c.rank(x);
  int64_t n = c.sizes(x)[static_cast<size_t>(axis)];
  ValueId best = axisReduce(c, max ? "amax" : "amin", x, {axis});
  ValueId hit = c.emit("eq", {x, best});
  ValueId pos = c.iota(n, static_cast<size_t>(axis), r, t);
  ValueId candidates = c.emit("where", {hit, pos, c.scalar(last ? -1.0 : static_cast<double>(n), t)});
  return axisReduce(c, last ? "amax" : "amin", candidates, {axis});
}

OnnxImporter argOp(bool max) {
  return [max](OnnxNode& c) -> OnnxOutputs {
    ValueId x = c.in(0);
    int64_t axis = c.axis(c.attrInt("axis", 0), c.rank(x));
    ValueId idx = c.cast(argExtreme(c, x, axis, max, c.attrInt("select_last_index", 0) != 0), DType::I64);
    if (c.attrInt("keepdims", 1)) return {idx};
    Ints s = c.sizes(idx);
    s.erase(s.begin() + axis);
    return {c.reshape(idx, s)};
  };
}

// (x - mean) * rsqrt(var + eps) over `axes`, with the mean and inverse deviation.
struct Normalized {
  ValueId y, mean, invStd;
};
Normalized normalize(OnnxNode& c, ValueId x, const Ints& axes, double eps) {
  DType t = c.dtype(x);
  ValueId mean = axisReduce(c, "mean", x, axes);
  ValueId d = c.emit("sub", {x, mean});
  ValueId var = axisReduce(c, "mean", c.emit("mul", {d, d}), axes);
  ValueId inv = c.emit("rsqrt", {c.emit("add", {var, c.scalar(eps, t)})});
  return {c.emit("mul", {d, inv}), mean, inv};
}

OnnxOutputs layerNorm(OnnxNode& c) {
  ValueId x = c.in(0), scale = c.in(1);
  Ints s = c.sizes(x);
  size_t axis = static_cast<size_t>(c.axis(c.attrInt("axis", -1), s.size()));
  double eps = c.attrFloat("epsilon", 1e-5);
  Ints norm(s.begin() + static_cast<std::ptrdiff_t>(axis), s.end());
  bool onlyY = std::ssize(c.n.outputs) == 1 || (c.n.outputs[1].empty() && (std::ssize(c.n.outputs) < 3 || c.n.outputs[2].empty()));
  bool exactShapes = c.sizes(scale) == norm && (!c.has(2) || c.sizes(c.in(2)) == norm);
  if (onlyY && exactShapes) {  // the registry's layer_norm (fused kernels)
    std::vector<ValueId> ins{x, scale};
    if (c.has(2)) ins.push_back(c.in(2));
    return {c.emit("layer_norm", ins, {{"normalized_shape", norm}, {"eps", eps}})};
  }
  Normalized n = normalize(c, x, tailAxes(axis, s.size()), eps);
  ValueId y = c.emit("mul", {n.y, scale});
  if (c.has(2)) y = c.emit("add", {y, c.in(2)});
  return {y, n.mean, n.invStd};
}

// A per-channel parameter [C] of x [N, C, ...], reshaped to [1, C, 1, ...] to broadcast.
ValueId channelParam(OnnxNode& c, ValueId p, ValueId x) {
  Ints xs = c.sizes(x), ps = c.sizes(p);
  if (xs.size() < 2) throw Error("the input must be [N, C, ...]");
  if (ps.size() != 1 || ps[0] != xs[1])
    throw Error("a per-channel input must be [" + std::to_string(xs[1]) + "], not " + shapeStr(c.shape(p)));
  Ints s(xs.size(), 1);
  s[1] = xs[1];
  return c.reshape(p, s);
}

OnnxOutputs instanceNorm(OnnxNode& c) {
  ValueId x = c.in(0);
  size_t r = c.rank(x);
  // Found by fuzz.onnx_loader: a rank-1 input wrote past the reshape's sizes.
  if (r < 3) throw Error("InstanceNormalization needs [N, C, spatial...]");
  Normalized n = normalize(c, x, tailAxes(2, r), c.attrFloat("epsilon", 1e-5));
  return {c.emit("add", {c.emit("mul", {n.y, channelParam(c, c.in(1), x)}), channelParam(c, c.in(2), x)})};
}

OnnxOutputs meanVarianceNorm(OnnxNode& c) {  // (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9), ONNX's definition
  ValueId x = c.in(0);
  DType t = c.dtype(x);
  Ints axes = c.attrInts("axes", {0, 2, 3});
  for (int64_t& a : axes) a = c.axis(a, c.rank(x));
  ValueId mean = axisReduce(c, "mean", x, axes);
  ValueId var = c.emit("sub", {axisReduce(c, "mean", c.emit("mul", {x, x}), axes), c.emit("mul", {mean, mean})});
  ValueId std = c.emit("add", {c.emit("sqrt", {var}), c.scalar(1e-9, t)});
  return {c.emit("div", {c.emit("sub", {x, mean}), std})};
}

OnnxOutputs lpNorm(OnnxNode& c) {
  ValueId x = c.in(0);
  int64_t axis = c.axis(c.attrInt("axis", -1), c.rank(x)), p = c.attrInt("p", 2);
  if (p != 1 && p != 2) throw OnnxUnsupported("p=" + std::to_string(p) + " is not supported (1 or 2)");
  ValueId norm = p == 1 ? axisReduce(c, "sum", c.emit("abs", {x}), {axis})
                        : c.emit("sqrt", {axisReduce(c, "sum", c.emit("mul", {x, x}), {axis})});
  return {c.emit("div", {x, norm})};
}

// -input[n, target[n, d...], d...] * weight[target], reduced; ignore_index weighs 0. The class
// pick is a masked sum over a one-hot of the target.
ValueId nllLoss(OnnxNode& c, ValueId input, ValueId target, std::optional<ValueId> weight) {
  Ints s = c.sizes(input);
  if (s.size() < 2) throw Error("the input must be [N, C, ...]");
  DType t = c.dtype(input), it = c.dtype(target);
  if (!isInteger(it)) throw Error("the target must be integer");
  size_t r = s.size();
  Ints tu = c.sizes(target);
  tu.insert(tu.begin() + 1, 1);
  ValueId hit = c.emit("eq", {c.reshape(target, tu), c.iota(s[1], 1, r, it)});
  ValueId zero = c.scalar(0, t);
  ValueId picked = axisReduce(c, "sum", c.emit("where", {hit, input, zero}), {1}, false);
  ValueId w;
  if (weight) {
    w = axisReduce(c, "sum", c.emit("where", {hit, channelParam(c, *weight, input), zero}), {1}, false);
  } else {
    Shape ts = c.shape(target);
    w = c.emit("full", {}, {{"shape", ts}, {"value", 1.0}, {"dtype", std::string(dtypeName(t))}});
  }
  if (const auto* ii = c.attr("ignore_index"))
    w = c.emit("where", {c.emit("eq", {target, c.scalar(static_cast<double>(ii->i), it)}), zero, w});
  ValueId loss = c.emit("neg", {c.emit("mul", {picked, w})});
  std::string reduction = c.attrString("reduction", "mean");
  if (reduction == "none") return loss;
  ValueId total = c.emit("sum", {loss});
  if (reduction == "sum") return total;
  if (reduction != "mean") throw OnnxUnsupported("reduction '" + reduction + "' is not supported");
  return c.emit("div", {total, c.emit("sum", {w})});
}

}  // namespace

void addNnImporters(OnnxImporters& m) {
  // Local response normalization across channels: x / (bias + alpha / size * sum of squares over
  // the `size` channels around c, floor((size-1)/2) before and ceil after)^beta.
  m["LRN"] = [](OnnxNode& c) -> OnnxOutputs {
    ValueId x = c.in(0);
    if (c.rank(x) < 3) throw Error("LRN needs an input of rank 3 or more (N, C, spatial...)");
    int64_t size = c.attrInt("size", 0);
    if (size < 1) throw Error("LRN's size must be a positive integer");
    int64_t channels = c.sizes(x)[1];
    if (size > 2 * channels + 1) throw OnnxUnsupported("an LRN window wider than twice the channels is not supported");
    DType t = c.dtype(x);
    ValueId padded = c.padDim(c.emit("mul", {x, x}), 1, (size - 1) / 2, size / 2, 0.0);
    ValueId sum = kNoId;
    for (int64_t j = 0; j < size; ++j) {
      ValueId tap = c.emit("slice", {padded}, {{"dim", int64_t{1}}, {"start", j}, {"end", j + channels}, {"step", int64_t{1}}});
      sum = sum == kNoId ? tap : c.emit("add", {sum, tap});
    }
    double alpha = c.attrFloat("alpha", 1e-4), beta = c.attrFloat("beta", 0.75), bias = c.attrFloat("bias", 1.0);
    ValueId base = c.emit("add", {c.scalar(bias, t), c.emit("mul", {c.scalar(alpha / static_cast<double>(size), t), sum})});
    return {c.emit("div", {x, c.emit("pow", {base, c.scalar(beta, t)})})};
  };
  m["Gemm"] = [](OnnxNode& c) -> OnnxOutputs {
    ValueId a = c.in(0), b = c.in(1);
    if (c.attrInt("transA", 0)) a = c.emit("transpose", {a}, {{"dim0", int64_t{0}}, {"dim1", int64_t{1}}});
    if (c.attrInt("transB", 0)) b = c.emit("transpose", {b}, {{"dim0", int64_t{0}}, {"dim1", int64_t{1}}});
    ValueId y = c.emit("matmul", {a, b});
    double alpha = c.attrFloat("alpha", 1), beta = c.attrFloat("beta", 1);
    DType t = c.dtype(y);
    if (alpha != 1) y = c.emit("mul", {y, c.scalar(alpha, t)});
    if (c.has(2)) {
      ValueId bias = c.in(2);
      if (beta != 1) bias = c.emit("mul", {bias, c.scalar(beta, t)});
      y = c.emit("add", {y, bias});
    }
    return {y};
  };
  m["GlobalAveragePool"] = [](OnnxNode& c) -> OnnxOutputs {
    ValueId x = c.in(0);
    return {axisReduce(c, "mean", x, tailAxes(2, c.rank(x)))};
  };
  m["GlobalMaxPool"] = [](OnnxNode& c) -> OnnxOutputs {
    ValueId x = c.in(0);
    return {axisReduce(c, "amax", x, tailAxes(2, c.rank(x)))};
  };
  m["BatchNormalization"] = [](OnnxNode& c) -> OnnxOutputs {
    ValueId x = c.in(0);
    if (c.rank(x) < 2) throw Error("BatchNormalization needs [N, C, ...]");
    bool training = c.attrInt("training_mode", 0) != 0;
    double eps = c.attrFloat("epsilon", 1e-5);
    ValueId y = c.emit("batch_norm", {x, c.in(1), c.in(2), c.in(3), c.in(4)}, {{"training", training}, {"eps", eps}});
    if (!training) return {y};
    // The batch statistics (population variance) blended into the running ones by momentum.
    Ints axes{0};
    for (size_t i = 2; i < c.rank(x); ++i) axes.push_back(static_cast<int64_t>(i));
    DType t = c.dtype(x);
    double momentum = c.attrFloat("momentum", 0.9);
    ValueId mean = axisReduce(c, "mean", x, axes, false);
    Ints keep(c.rank(x), 1);
    keep[1] = c.sizes(x)[1];
    ValueId d = c.emit("sub", {x, c.reshape(mean, keep)});
    ValueId var = axisReduce(c, "mean", c.emit("mul", {d, d}), axes, false);
    auto blend = [&](ValueId running, ValueId batch) {
      return c.emit("add", {c.emit("mul", {running, c.scalar(momentum, t)}), c.emit("mul", {batch, c.scalar(1 - momentum, t)})});
    };
    return {y, blend(c.in(3), mean), blend(c.in(4), var)};
  };
  m["LayerNormalization"] = layerNorm;
  m["InstanceNormalization"] = instanceNorm;
  m["MeanVarianceNormalization"] = meanVarianceNorm;
  m["LpNormalization"] = lpNorm;
  m["Softmax"] = overAxis([](OnnxNode& c, ValueId x, int64_t a) { return c.emit("softmax", {x}, {{"dim", a}}); });
  m["LogSoftmax"] = overAxis([](OnnxNode& c, ValueId x, int64_t a) { return c.emit("log_softmax", {x}, {{"dim", a}}); });
  m["Hardmax"] = overAxis([](OnnxNode& c, ValueId x, int64_t a) {  // one-hot of the first max
    ValueId first = argExtreme(c, x, a, true, false);
    ValueId pos = c.iota(c.sizes(x)[static_cast<size_t>(a)], static_cast<size_t>(a), c.rank(x), c.dtype(first));
    return c.cast(c.emit("eq", {pos, first}), c.dtype(x));
  });
  m["ArgMax"] = argOp(true);
  m["ArgMin"] = argOp(false);
  m["NegativeLogLikelihoodLoss"] = [](OnnxNode& c) -> OnnxOutputs {
    return {nllLoss(c, c.in(0), c.in(1), c.has(2) ? std::optional<ValueId>(c.in(2)) : std::nullopt)};
  };
  m["SoftmaxCrossEntropyLoss"] = [](OnnxNode& c) -> OnnxOutputs {
    ValueId logProb = c.emit("log_softmax", {c.in(0)}, {{"dim", int64_t{1}}});
    return {nllLoss(c, logProb, c.in(1), c.has(2) ? std::optional<ValueId>(c.in(2)) : std::nullopt), logProb};
  };
}

}  // namespace fusebox

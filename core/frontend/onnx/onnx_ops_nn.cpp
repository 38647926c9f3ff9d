// ONNX neural-network ops as registry ops: Gemm, convolution and pooling (1-D through the 2-D
// ops, explicit pads for asymmetric, SAME and ceil-mode windows), normalizations, softmax
// family, arg max/min and the two losses.
#include <onnx/onnx_pb.h>

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

// A window op over the spatial dims of [N, C, spatial...] with ONNX's pads, auto_pad and ceil_mode
// resolved into explicit (lo, hi) pads per spatial dim.
struct Window {
  Ints kernel, stride, dilation, lo, hi;
  Ints ceilExtra;  // the part of hi that ceil_mode added (no pad the user asked for)
  bool oneD = false;
};

// Pooling windows may use ceil_mode but not dilations; convolution windows the other way round.
Window windowOf(OnnxNode& c, const Ints& spatial, const Ints& kernel, bool pooling) {
  size_t n = spatial.size();
  if (n != 1 && n != 2) throw OnnxUnsupported(std::to_string(n) + "-D windows are not supported (1-D and 2-D only)");
  Window w;
  w.kernel = kernel;
  w.oneD = n == 1;
  w.stride = c.attrInts("strides", Ints(n, 1));
  w.dilation = c.attrInts("dilations", Ints(n, 1));
  Ints pads = c.attrInts("pads", Ints(2 * n, 0));
  if (kernel.size() != n || w.stride.size() != n || w.dilation.size() != n || pads.size() != 2 * n)
    throw Error("kernel_shape, strides, dilations and pads must match the " + std::to_string(n) + " spatial dims");
  std::string autoPad = c.attrString("auto_pad", "NOTSET");
  bool ceil = c.attrInt("ceil_mode", 0) != 0;
  if (ceil && !pooling) throw OnnxUnsupported("ceil_mode=1 is not supported here");
  if (pooling)
    for (int64_t d : w.dilation)
      if (d != 1) throw OnnxUnsupported("dilated pooling is not supported");
  for (size_t i = 0; i < n; ++i) {
    int64_t in = spatial[i], keff = (kernel[i] - 1) * w.dilation[i] + 1, s = w.stride[i];
    int64_t lo = pads[i], hi = pads[i + n], extra = 0;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t out = (in + s - 1) / s, total = std::max<int64_t>(0, (out - 1) * s + keff - in);
      lo = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      hi = total - lo;
    } else if (autoPad == "VALID") {
      lo = hi = 0;
    } else if (autoPad != "NOTSET") {
      throw OnnxUnsupported("auto_pad=" + autoPad + " is not supported");
    }
    if (ceil) {  // one more window when the last would start inside the (left-padded) input
      int64_t span = in + lo + hi - keff;
      int64_t out = (span + s - 1) / s + 1;
      if ((out - 1) * s >= in + lo) --out;
      extra = std::max<int64_t>(0, (out - 1) * s + keff - (in + lo + hi));
    }
    w.lo.push_back(lo);
    w.hi.push_back(hi + extra);
    w.ceilExtra.push_back(extra);
  }
  if (w.oneD) {  // through the 2-D ops as [N, C, 1, L]
    for (Ints* v : {&w.kernel, &w.stride, &w.dilation, &w.lo, &w.hi, &w.ceilExtra}) v->insert(v->begin(), 1);
    w.lo[0] = w.hi[0] = w.ceilExtra[0] = 0;
  }
  return w;
}

bool symmetric(const Window& w) { return w.lo == w.hi; }

ValueId to2d(OnnxNode& c, ValueId x, const Window& w) {
  if (!w.oneD) return x;
  Ints s = c.sizes(x);
  return c.reshape(x, {s[0], s[1], 1, s[2]});
}
ValueId from2d(OnnxNode& c, ValueId y, const Window& w) {
  if (!w.oneD) return y;
  Ints s = c.sizes(y);
  return c.reshape(y, {s[0], s[1], s[3]});
}

ValueId padSpatial(OnnxNode& c, ValueId x, const Window& w, double value) {
  for (size_t i = 0; i < 2; ++i) x = c.padDim(x, i + 2, w.lo[i], w.hi[i], value);
  return x;
}

Ints spatialOf(OnnxNode& c, ValueId x) {
  Ints s = c.sizes(x);
  if (s.size() < 3) throw Error("expected [N, C, spatial...], got rank " + std::to_string(s.size()));
  return Ints(s.begin() + 2, s.end());
}

OnnxOutputs conv(OnnxNode& c) {
  ValueId x = c.in(0), wt = c.in(1);
  Ints ws = c.sizes(wt);
  if (ws.size() != c.rank(x) || ws.size() < 3) throw Error("the weight must be [M, C/group, kernel...] with the input's rank");
  Window w = windowOf(c, spatialOf(c, x), Ints(ws.begin() + 2, ws.end()), false);
  x = to2d(c, x, w);
  wt = to2d(c, wt, w);
  Ints padding{w.lo[0], w.lo[1]};
  if (!symmetric(w)) {
    x = padSpatial(c, x, w, 0);
    padding = {0, 0};
  }
  std::vector<ValueId> ins{x, wt};
  if (c.has(2)) ins.push_back(c.in(2));
  ValueId y = c.emit("conv2d", ins, {{"stride", w.stride}, {"padding", padding}, {"dilation", w.dilation}, {"groups", c.attrInt("group", 1)}});
  return {from2d(c, y, w)};
}

OnnxOutputs maxPool(OnnxNode& c) {
  if (c.n.output_size() > 1 && !c.n.output(1).empty()) throw OnnxUnsupported("the Indices output is not supported");
  ValueId x = c.in(0);
  if (!isFloating(c.dtype(x))) throw OnnxUnsupported("integer max pooling is not supported");
  Window w = windowOf(c, spatialOf(c, x), c.attrInts("kernel_shape"), true);
  x = to2d(c, x, w);
  // max_pool2d pads with -inf and allows pads up to half the kernel; anything else is padded here.
  bool direct = symmetric(w) && 2 * w.lo[0] <= w.kernel[0] && 2 * w.lo[1] <= w.kernel[1];
  Ints padding{w.lo[0], w.lo[1]};
  if (!direct) {
    x = padSpatial(c, x, w, -INFINITY);
    padding = {0, 0};
  }
  return {from2d(c, c.emit("max_pool2d", {x}, {{"kernel_size", w.kernel}, {"stride", w.stride}, {"padding", padding}}), w)};
}

// Averages over the window; the divisor counts the input elements (count_include_pad=0) or also
// the pads (=1), but never the extra elements ceil_mode adds, as ONNX and PyTorch define it.
OnnxOutputs averagePool(OnnxNode& c) {
  ValueId x = c.in(0);
  Ints spatial = spatialOf(c, x);
  Window w = windowOf(c, spatial, c.attrInts("kernel_shape"), true);
  bool includePad = c.attrInt("count_include_pad", 0) != 0;
  x = to2d(c, x, w);
  Ints in2 = c.sizes(x);
  bool padded = false;
  for (size_t i = 0; i < 2; ++i) padded |= w.lo[i] || w.hi[i];
  if (!padded) return {from2d(c, c.emit("avg_pool2d", {x}, {{"kernel_size", w.kernel}, {"stride", w.stride}, {"padding", Ints{0, 0}}}), w)};
  // Sum over the window (mean of the zero-padded input times the window size), then divide by the count.
  ValueId xp = padSpatial(c, x, w, 0);
  ValueId mean = c.emit("avg_pool2d", {xp}, {{"kernel_size", w.kernel}, {"stride", w.stride}, {"padding", Ints{0, 0}}});
  Ints os = c.sizes(mean);
  int64_t oh = os[2], ow = os[3], area = w.kernel[0] * w.kernel[1];
  // The pads the user asked for (not ceil_mode's extra) bound what count_include_pad counts.
  Ints userHi{w.hi[0] - w.ceilExtra[0], w.hi[1] - w.ceilExtra[1]};
  OnnxContext::checkBuildable({oh, ow}, "a window-count table");
  // How many of the window's positions along spatial dim d (0: rows, 1: columns) count for output o.
  auto counted = [&](size_t d, int64_t o) {
    int64_t n = 0, first = includePad ? -w.lo[d] : 0, end = in2[d + 2] + (includePad ? userHi[d] : 0);
    for (int64_t k = 0; k < w.kernel[d]; ++k) {
      int64_t at = o * w.stride[d] + k - w.lo[d];
      n += at >= first && at < end;
    }
    return n;
  };
  Tensor count(c.dtype(x), {oh, ow});
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t j = 0; j < ow; ++j) count.data[static_cast<size_t>(i * ow + j)] = static_cast<double>(counted(0, i) * counted(1, j));
  ValueId sum = c.emit("mul", {mean, c.scalar(static_cast<double>(area), c.dtype(x))});
  return {from2d(c, c.emit("div", {sum, c.cx.constantValue(count)}), w)};
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
  bool onlyY = c.n.output_size() == 1 || (c.n.output(1).empty() && (c.n.output_size() < 3 || c.n.output(2).empty()));
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

ValueId channelParam(OnnxNode& c, ValueId p, size_t rank) {  // [C] -> [1, C, 1, ...]
  Ints s(rank, 1);
  s[1] = c.sizes(p).at(0);
  return c.reshape(p, s);
}

OnnxOutputs instanceNorm(OnnxNode& c) {
  ValueId x = c.in(0);
  size_t r = c.rank(x);
  Normalized n = normalize(c, x, tailAxes(2, r), c.attrFloat("epsilon", 1e-5));
  return {c.emit("add", {c.emit("mul", {n.y, channelParam(c, c.in(1), r)}), channelParam(c, c.in(2), r)})};
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
    w = axisReduce(c, "sum", c.emit("where", {hit, channelParam(c, *weight, r), zero}), {1}, false);
  } else {
    Shape ts = c.shape(target);
    w = c.emit("full", {}, {{"shape", ts}, {"value", 1.0}, {"dtype", std::string(dtypeName(t))}});
  }
  if (const auto* ii = c.attr("ignore_index"))
    w = c.emit("where", {c.emit("eq", {target, c.scalar(static_cast<double>(ii->i()), it)}), zero, w});
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
  m["Conv"] = conv;
  m["MaxPool"] = maxPool;
  m["AveragePool"] = averagePool;
  m["GlobalAveragePool"] = [](OnnxNode& c) -> OnnxOutputs {
    ValueId x = c.in(0);
    return {axisReduce(c, "mean", x, tailAxes(2, c.rank(x)))};
  };
  m["GlobalMaxPool"] = [](OnnxNode& c) -> OnnxOutputs {
    ValueId x = c.in(0);
    return {axisReduce(c, "amax", x, tailAxes(2, c.rank(x)))};
  };
  m["BatchNormalization"] = [](OnnxNode& c) -> OnnxOutputs {
    if (c.attrInt("training_mode", 0)) throw OnnxUnsupported("training_mode=1 is not supported");
    ValueId x = c.in(0);
    if (c.rank(x) < 2) throw Error("BatchNormalization needs [N, C, ...]");
    return {c.emit("batch_norm", {x, c.in(1), c.in(2), c.in(3), c.in(4)}, {{"training", false}, {"eps", c.attrFloat("epsilon", 1e-5)}})};
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

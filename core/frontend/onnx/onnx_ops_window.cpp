// ONNX's window ops over any number of spatial dims as the registry's 2-D ops: Conv,
// ConvTranspose, MaxPool and AveragePool. ONNX's pads, auto_pad and ceil_mode resolve into
// explicit (lo, hi) pads per dim; 1-D windows run as [N, C, 1, L]; a third (fourth, ...) spatial
// dim is unrolled: each of its kernel taps is a strided slice whose output positions fold into
// the batch, so a 3-D convolution is k_d 2-D ones summed (a pool: k_d pools combined). Dilated
// pooling, which the 2-D pools lack, combines one strided slice per window tap. A transposed
// convolution is the convolution of the stride-dilated input with the flipped, transposed weight.

#include <cmath>

#include "core/frontend/onnx/onnx_ops.h"
#include "core/ir/error.h"

namespace fusebox {

namespace {

using Ints = std::vector<int64_t>;

// A window over the n spatial dims of [N, C, spatial...].
struct Window {
  Ints kernel, stride, dilation, lo, hi;
  Ints ceilExtra;  // the part of hi that ceil_mode added (no pad the user asked for)
  size_t dims() const { return kernel.size(); }
  Ints span() const {  // (k - 1) * d + 1 per dim
    Ints s;
    for (size_t i = 0; i < dims(); ++i) s.push_back((kernel[i] - 1) * dilation[i] + 1);
    return s;
  }
};

Ints spatialOf(OnnxNode& c, ValueId x) {
  Ints s = c.sizes(x);
  if (s.size() < 3) throw Error("expected [N, C, spatial...], got rank " + std::to_string(s.size()));
  return Ints(s.begin() + 2, s.end());
}

// Pooling windows may use ceil_mode; convolution windows may not.
Window windowOf(OnnxNode& c, const Ints& spatial, const Ints& kernel, bool pooling) {
  size_t n = spatial.size();
  Window w;
  w.kernel = kernel;
  w.stride = c.attrInts("strides", Ints(n, 1));
  w.dilation = c.attrInts("dilations", Ints(n, 1));
  Ints pads = c.attrInts("pads", Ints(2 * n, 0));
  if (kernel.size() != n || w.stride.size() != n || w.dilation.size() != n || pads.size() != 2 * n)
    throw Error("kernel_shape, strides, dilations and pads must match the " + std::to_string(n) + " spatial dims");
  for (size_t i = 0; i < n; ++i)
    if (kernel[i] <= 0 || w.stride[i] <= 0 || w.dilation[i] <= 0 || pads[i] < 0 || pads[i + n] < 0)
      throw Error("kernel_shape, strides and dilations must be positive and pads not negative");
  std::string autoPad = c.attrString("auto_pad", "NOTSET");
  bool ceil = c.attrInt("ceil_mode", 0) != 0;
  if (ceil && !pooling) throw OnnxUnsupported("ceil_mode=1 is not supported here");
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
    if (in + lo + hi + extra < keff) throw Error("the window is larger than the padded input");
    w.lo.push_back(lo);
    w.hi.push_back(hi + extra);
    w.ceilExtra.push_back(extra);
  }
  return w;
}

// The window without its first spatial dim (what a 3-D window unrolls to).
Window inner(const Window& w) {
  Window r;
  for (auto [to, from] : {std::pair{&r.kernel, &w.kernel}, {&r.stride, &w.stride}, {&r.dilation, &w.dilation}, {&r.lo, &w.lo},
                          {&r.hi, &w.hi}, {&r.ceilExtra, &w.ceilExtra}})
    to->assign(from->begin() + 1, from->end());
  return r;
}

// The window with a leading unit dim (a 1-D window as 2-D).
Window asTwoD(const Window& w) {
  Window r = w;
  for (Ints* v : {&r.kernel, &r.stride, &r.dilation}) v->insert(v->begin(), 1);
  for (Ints* v : {&r.lo, &r.hi, &r.ceilExtra}) v->insert(v->begin(), 0);
  return r;
}

ValueId padAll(OnnxNode& c, ValueId x, const Window& w, double value) {
  for (size_t i = 0; i < w.dims(); ++i) x = c.padDim(x, i + 2, w.lo[i], w.hi[i], value);
  return x;
}

Window unpadded(Window w) {
  std::fill(w.lo.begin(), w.lo.end(), 0);
  std::fill(w.hi.begin(), w.hi.end(), 0);
  std::fill(w.ceilExtra.begin(), w.ceilExtra.end(), 0);
  return w;
}

Ints outSizes(const Ints& spatial, const Window& w) {
  Ints out;
  Ints span = w.span();
  for (size_t i = 0; i < w.dims(); ++i) out.push_back((spatial[i] + w.lo[i] + w.hi[i] - span[i]) / w.stride[i] + 1);
  return out;
}

// Spatial dim 0 of an unpadded [N, C, S0, rest...] at tap j: the strided slice of the positions
// window tap j reads for each of the out0 outputs, with the outputs folded into the batch:
// [N * out0, C, rest...].
ValueId tapFolded(OnnxNode& c, ValueId x, const Window& w, int64_t j, int64_t out0) {
  int64_t start = j * w.dilation[0];
  ValueId s = c.emit("slice", {x}, {{"dim", int64_t{2}}, {"start", start}, {"end", start + (out0 - 1) * w.stride[0] + 1}, {"step", w.stride[0]}});
  Ints sz = c.sizes(s);
  size_t r = sz.size();
  Ints perm{0, 2, 1};
  for (size_t i = 3; i < r; ++i) perm.push_back(static_cast<int64_t>(i));
  ValueId p = c.emit("permute", {s}, {{"dims", perm}});
  Ints folded{sz[0] * out0, sz[1]};
  folded.insert(folded.end(), sz.begin() + 3, sz.end());
  return c.reshape(p, folded);
}

// [N * out0, C, rest...] back to [N, C, out0, rest...].
ValueId unfold(OnnxNode& c, ValueId y, int64_t n, int64_t out0) {
  Ints sz = c.sizes(y);
  Ints split{n, out0};
  split.insert(split.end(), sz.begin() + 1, sz.end());
  ValueId u = c.reshape(y, split);
  Ints perm{0, 2, 1};
  for (size_t i = 3; i < split.size(); ++i) perm.push_back(static_cast<int64_t>(i));
  return c.emit("permute", {u}, {{"dims", perm}});
}

ValueId withBias(OnnxNode& c, ValueId y, std::optional<ValueId> bias) {
  if (!bias) return y;
  Ints s(c.rank(y), 1);
  s[1] = c.sizes(*bias).at(0);
  return c.emit("add", {y, c.reshape(*bias, s)});
}

// The convolution of x [N, C, spatial...] with w [M, C/groups, kernel...] plus bias [M].
ValueId convolve(OnnxNode& c, ValueId x, ValueId w, std::optional<ValueId> bias, const Window& win, int64_t groups) {
  size_t n = win.dims();
  if (n == 1) {
    Ints xs = c.sizes(x), ws = c.sizes(w);
    ValueId y = convolve(c, c.reshape(x, {xs[0], xs[1], 1, xs[2]}), c.reshape(w, {ws[0], ws[1], 1, ws[2]}), bias, asTwoD(win), groups);
    Ints ys = c.sizes(y);
    return c.reshape(y, {ys[0], ys[1], ys[3]});
  }
  if (n == 2) {  // conv2d, with its own bias (its kernels fuse it)
    Ints padding{win.lo[0], win.lo[1]};
    if (win.lo != win.hi) {
      x = padAll(c, x, win, 0);
      padding = {0, 0};
    }
    std::vector<ValueId> ins{x, w};
    if (bias) ins.push_back(*bias);
    return c.emit("conv2d", ins, {{"stride", win.stride}, {"padding", padding}, {"dilation", win.dilation}, {"groups", groups}});
  }
  // Unroll spatial dim 0: one (n-1)-D convolution per kernel tap, summed.
  x = padAll(c, x, win, 0);
  Window flat = unpadded(win);
  int64_t batch = c.sizes(x)[0], out0 = outSizes(spatialOf(c, x), flat)[0];
  Ints ws = c.sizes(w);
  Ints tapShape{ws[0], ws[1]};
  tapShape.insert(tapShape.end(), ws.begin() + 3, ws.end());
  ValueId sum = kNoId;
  for (int64_t j = 0; j < win.kernel[0]; ++j) {
    ValueId wj = c.reshape(c.emit("slice", {w}, {{"dim", int64_t{2}}, {"start", j}, {"end", j + 1}, {"step", int64_t{1}}}), tapShape);
    ValueId yj = convolve(c, tapFolded(c, x, flat, j, out0), wj, std::nullopt, inner(flat), groups);
    sum = sum == kNoId ? yj : c.emit("add", {sum, yj});
  }
  return withBias(c, unfold(c, sum, batch, out0), bias);
}

std::optional<ValueId> biasInput(OnnxNode& c) { return c.has(2) ? std::optional<ValueId>(c.in(2)) : std::nullopt; }

OnnxOutputs conv(OnnxNode& c) { return {onnxConvolution(c, c.in(0), c.in(1), biasInput(c))}; }

// x with s - 1 zeros between neighbours along spatial dim i (dim i + 2): (L - 1) * s + 1 long.
ValueId strideDilate(OnnxNode& c, ValueId x, size_t i, int64_t s) {
  if (s == 1) return x;
  Ints sz = c.sizes(x);
  size_t d = i + 2;
  Ints split = sz;
  split.insert(split.begin() + static_cast<std::ptrdiff_t>(d) + 1, 1);
  ValueId spread = c.padDim(c.reshape(x, split), d + 1, 0, s - 1, 0);  // [.., L, s, ..]
  Ints merged = sz;
  merged[d] = sz[d] * s;
  ValueId m = c.reshape(spread, merged);
  return c.emit("slice", {m}, {{"dim", static_cast<int64_t>(d)}, {"start", int64_t{0}}, {"end", (sz[d] - 1) * s + 1}, {"step", int64_t{1}}});
}

// ConvTranspose: y = conv(dilate(x, strides), flip(W)^T) with pads (k-1)*d - pad on each side.
OnnxOutputs convTranspose(OnnxNode& c) {
  ValueId x = c.in(0), wt = c.in(1);
  Ints xs = c.sizes(x), ws = c.sizes(wt);
  if (ws.size() != xs.size() || ws.size() < 3) throw Error("the weight must be [C, M/group, kernel...] with the input's rank");
  size_t n = ws.size() - 2;
  int64_t groups = c.attrInt("group", 1);
  if (groups <= 0 || xs[1] != ws[0] || ws[0] % groups != 0) throw Error("the weight's first dim must be the input channels, a multiple of group");
  Ints kernel(ws.begin() + 2, ws.end());
  Ints given = c.attrInts("kernel_shape", kernel);
  if (given != kernel) throw Error("kernel_shape does not match the weight");
  Ints stride = c.attrInts("strides", Ints(n, 1)), dilation = c.attrInts("dilations", Ints(n, 1));
  Ints pads = c.attrInts("pads", Ints(2 * n, 0)), outPad = c.attrInts("output_padding", Ints(n, 0));
  Ints outShape = c.attrInts("output_shape");
  if (stride.size() != n || dilation.size() != n || pads.size() != 2 * n || outPad.size() != n || (!outShape.empty() && outShape.size() != n))
    throw Error("strides, dilations, pads, output_padding and output_shape must match the " + std::to_string(n) + " spatial dims");
  std::string autoPad = c.attrString("auto_pad", "NOTSET");
  for (size_t i = 0; i < n; ++i) {
    if (stride[i] <= 0 || dilation[i] <= 0 || pads[i] < 0 || pads[i + n] < 0 || outPad[i] < 0)
      throw Error("strides and dilations must be positive, pads and output_padding not negative");
    int64_t full = stride[i] * (xs[i + 2] - 1) + outPad[i] + (kernel[i] - 1) * dilation[i] + 1;
    int64_t want = !outShape.empty() ? outShape[i] : autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER" ? xs[i + 2] * stride[i] : -1;
    if (want >= 0) {
      // The pads that give the wanted size, split as ONNX's reference does (floor division):
      // SAME_UPPER crops the odd one at the end, otherwise at the start; a wanted size past the
      // full output (total < 0) is zeros at the end. (onnxruntime splits odd totals the other way.)
      int64_t total = full - want, half = total >= 0 ? total / 2 : -((1 - total) / 2);
      pads[i] = autoPad == "SAME_UPPER" ? half : total - half;
      pads[i + n] = total - pads[i];
    } else if (autoPad == "VALID") {
      pads[i] = pads[i + n] = 0;
    } else if (autoPad != "NOTSET") {
      throw OnnxUnsupported("auto_pad=" + autoPad + " is not supported");
    }
  }
  // W [C, M/g, k...] -> flipped along each spatial dim, then [M, C/g, k...] per group.
  for (size_t i = 0; i < n; ++i) {
    std::vector<double> rev;
    for (int64_t k = kernel[i] - 1; k >= 0; --k) rev.push_back(static_cast<double>(k));
    wt = onnxGatherAlong(c, wt, i + 2, c.cx.constantValue(Tensor(DType::I64, {kernel[i]}, rev)));
  }
  int64_t cin = ws[0], mg = ws[1];
  Ints grouped{groups, cin / groups, mg};
  grouped.insert(grouped.end(), kernel.begin(), kernel.end());
  Ints perm{0, 2, 1};
  for (size_t i = 0; i < n; ++i) perm.push_back(static_cast<int64_t>(i + 3));
  Ints convWeight{groups * mg, cin / groups};
  convWeight.insert(convWeight.end(), kernel.begin(), kernel.end());
  wt = c.reshape(c.emit("permute", {c.reshape(wt, grouped)}, {{"dims", perm}}), convWeight);
  Window w;
  for (size_t i = 0; i < n; ++i) {
    x = strideDilate(c, x, i, stride[i]);
    int64_t keff = (kernel[i] - 1) * dilation[i];
    // negative pads crop what the convolution would have produced outside the output
    x = c.padDim(x, i + 2, keff - pads[i], keff - pads[i + n] + outPad[i], 0);
    w.kernel.push_back(kernel[i]);
    w.stride.push_back(1);
    w.dilation.push_back(dilation[i]);
    w.lo.push_back(0);
    w.hi.push_back(0);
    w.ceilExtra.push_back(0);
  }
  return {convolve(c, x, wt, biasInput(c), w, groups)};
}

// Calls f(tap) for every tap of the window, row-major (the last dim fastest).
template <class F>
void forEachTap(const Window& w, F f) {
  size_t n = w.dims();
  Ints tap(n, 0);
  for (;;) {
    f(tap);
    size_t i = n;
    while (i > 0 && ++tap[i - 1] == w.kernel[i - 1]) tap[--i] = 0;
    if (i == 0) return;
  }
}

// The input values one tap sees along spatial dim i of each output position (out[i] of them).
ValueId tapSlice(OnnxNode& c, ValueId x, const Window& w, const Ints& out, size_t i, int64_t tap) {
  int64_t start = tap * w.dilation[i];
  return c.emit("slice", {x}, {{"dim", static_cast<int64_t>(i + 2)}, {"start", start}, {"end", start + (out[i] - 1) * w.stride[i] + 1},
                               {"step", w.stride[i]}});
}

// Combines the window taps by strided slices (any dilation, any number of dims): max, or sum.
ValueId tapsCombined(OnnxNode& c, ValueId xPadded, const Window& w, bool max) {
  Ints out = outSizes(spatialOf(c, xPadded), unpadded(w));
  ValueId acc = kNoId;
  forEachTap(w, [&](const Ints& tap) {
    ValueId s = xPadded;
    for (size_t i = 0; i < w.dims(); ++i) s = tapSlice(c, s, w, out, i, tap[i]);
    acc = acc == kNoId ? s : c.emit(max ? "maximum" : "add", {acc, s});
  });
  return acc;
}

bool dilated(const Window& w) {
  return std::any_of(w.dilation.begin(), w.dilation.end(), [](int64_t d) { return d != 1; });
}

// Max over the windows of x (padded with -inf where the window asks).
ValueId maxPooled(OnnxNode& c, ValueId x, const Window& w) {
  size_t n = w.dims();
  if (dilated(w)) return tapsCombined(c, padAll(c, x, w, -INFINITY), w, true);
  if (n == 1) {
    Ints xs = c.sizes(x);
    ValueId y = maxPooled(c, c.reshape(x, {xs[0], xs[1], 1, xs[2]}), asTwoD(w));
    Ints ys = c.sizes(y);
    return c.reshape(y, {ys[0], ys[1], ys[3]});
  }
  if (n == 2) {
    // max_pool2d pads with -inf and allows pads up to half the kernel; anything else is padded here.
    bool direct = w.lo == w.hi && 2 * w.lo[0] <= w.kernel[0] && 2 * w.lo[1] <= w.kernel[1];
    Ints padding{w.lo[0], w.lo[1]};
    if (!direct) {
      x = padAll(c, x, w, -INFINITY);
      padding = {0, 0};
    }
    return c.emit("max_pool2d", {x}, {{"kernel_size", w.kernel}, {"stride", w.stride}, {"padding", padding}});
  }
  x = padAll(c, x, w, -INFINITY);
  Window flat = unpadded(w);
  int64_t batch = c.sizes(x)[0], out0 = outSizes(spatialOf(c, x), flat)[0];
  ValueId acc = kNoId;
  for (int64_t j = 0; j < w.kernel[0]; ++j) {
    ValueId yj = maxPooled(c, tapFolded(c, x, flat, j, out0), inner(flat));
    acc = acc == kNoId ? yj : c.emit("maximum", {acc, yj});
  }
  return unfold(c, acc, batch, out0);
}

// The mean over the windows of an unpadded x (every window full).
ValueId meanPooled(OnnxNode& c, ValueId x, const Window& w) {
  size_t n = w.dims();
  if (dilated(w)) {
    int64_t area = 1;
    for (int64_t k : w.kernel) area *= k;
    return c.emit("div", {tapsCombined(c, x, w, false), c.scalar(static_cast<double>(area), c.dtype(x))});
  }
  if (n == 1) {
    Ints xs = c.sizes(x);
    ValueId y = meanPooled(c, c.reshape(x, {xs[0], xs[1], 1, xs[2]}), asTwoD(w));
    Ints ys = c.sizes(y);
    return c.reshape(y, {ys[0], ys[1], ys[3]});
  }
  if (n == 2) return c.emit("avg_pool2d", {x}, {{"kernel_size", w.kernel}, {"stride", w.stride}, {"padding", Ints{0, 0}}});
  int64_t batch = c.sizes(x)[0], out0 = outSizes(spatialOf(c, x), w)[0];
  ValueId sum = kNoId;
  for (int64_t j = 0; j < w.kernel[0]; ++j) {
    ValueId yj = meanPooled(c, tapFolded(c, x, w, j, out0), inner(w));
    sum = sum == kNoId ? yj : c.emit("add", {sum, yj});
  }
  return unfold(c, c.emit("div", {sum, c.scalar(static_cast<double>(w.kernel[0]), c.dtype(x))}), batch, out0);
}

// Max pooling with its Indices output: each window's first maximum (taps in row-major order) and
// its position in the flattened input, (n * C + c) * S0 * S1 ... + p0 * S1 * ... + p1 * ...
// (storage_order 1: the spatial positions column-major, p0 + p1 * S0 + ...), built from iotas.
OnnxOutputs maxPoolWithIndices(OnnxNode& c, ValueId x, const Window& w) {
  bool columnMajor = c.attrInt("storage_order", 0) != 0;
  Ints xs = c.sizes(x), spatial = spatialOf(c, x);
  size_t n = w.dims(), rank = n + 2;
  Ints out = outSizes(spatial, w);
  ValueId padded = padAll(c, x, w, -INFINITY);
  int64_t plane = numelOf(spatial);
  ValueId base = c.emit("add", {c.emit("mul", {c.iota(xs[0], 0, rank, DType::I64), c.scalar(static_cast<double>(xs[1] * plane), DType::I64)}),
                                c.emit("mul", {c.iota(xs[1], 1, rank, DType::I64), c.scalar(static_cast<double>(plane), DType::I64)})});
  ValueId best = kNoId, bestIndex = kNoId;
  forEachTap(w, [&](const Ints& tap) {
    ValueId v = padded, index = base;
    int64_t stride = columnMajor ? 1 : plane;
    for (size_t i = 0; i < n; ++i) {
      v = tapSlice(c, v, w, out, i, tap[i]);
      if (!columnMajor) stride /= spatial[i];
      // input position of output o along dim i: o * stride + tap * dilation - pad
      ValueId pos = c.emit("add", {c.emit("mul", {c.iota(out[i], i + 2, rank, DType::I64), c.scalar(static_cast<double>(w.stride[i]), DType::I64)}),
                                   c.scalar(static_cast<double>(tap[i] * w.dilation[i] - w.lo[i]), DType::I64)});
      index = c.emit("add", {index, c.emit("mul", {pos, c.scalar(static_cast<double>(stride), DType::I64)})});
      if (columnMajor) stride *= spatial[i];
    }
    if (best == kNoId) {
      best = v;
      bestIndex = c.emit("expand", {index}, {{"shape", c.shape(v)}});
    } else {
      ValueId better = c.emit("gt", {v, best});
      best = c.emit("where", {better, v, best});
      bestIndex = c.emit("where", {better, index, bestIndex});
    }
  });
  return {best, bestIndex};
}

OnnxOutputs maxPool(OnnxNode& c) {
  ValueId x = c.in(0);
  DType t = c.dtype(x);
  if (t == DType::Bool) throw OnnxUnsupported("max pooling of bool tensors is not supported");
  if (!isFloating(t)) x = c.cast(x, DType::F32);  // exact for the integer types ONNX pools (int8, uint8)
  Window w = windowOf(c, spatialOf(c, x), c.attrInts("kernel_shape"), true);
  OnnxOutputs y = std::ssize(c.n.outputs) > 1 && !c.n.outputs[1].empty() ? maxPoolWithIndices(c, x, w) : OnnxOutputs{maxPooled(c, x, w)};
  y[0] = c.cast(y[0], t);
  return y;
}

// Averages over the window; the divisor counts the input elements (count_include_pad=0) or also
// the pads (=1), but never the extra elements ceil_mode adds, as ONNX and PyTorch define it.
OnnxOutputs averagePool(OnnxNode& c) {
  ValueId x = c.in(0);
  Ints spatial = spatialOf(c, x);
  Window w = windowOf(c, spatial, c.attrInts("kernel_shape"), true);
  bool includePad = c.attrInt("count_include_pad", 0) != 0;
  bool padded = std::any_of(w.lo.begin(), w.lo.end(), [](int64_t p) { return p; }) ||
                std::any_of(w.hi.begin(), w.hi.end(), [](int64_t p) { return p; });
  if (!padded) return {meanPooled(c, x, w)};
  // The mean over the zero-padded windows times the window's size is their sum; divide by the count.
  ValueId mean = meanPooled(c, padAll(c, x, w, 0), unpadded(w));
  Ints out = spatialOf(c, mean);
  int64_t area = 1;
  for (int64_t k : w.kernel) area *= k;
  OnnxContext::checkBuildable(out, "a window-count table");
  // How many of the window's taps along spatial dim d count for output o: the pads the user asked
  // for (not ceil_mode's extra) count with count_include_pad.
  auto counted = [&](size_t d, int64_t o) {
    int64_t k = 0, first = includePad ? -w.lo[d] : 0, end = spatial[d] + (includePad ? w.hi[d] - w.ceilExtra[d] : 0);
    for (int64_t t = 0; t < w.kernel[d]; ++t) {
      int64_t at = o * w.stride[d] + t * w.dilation[d] - w.lo[d];
      k += at >= first && at < end;
    }
    return k;
  };
  Tensor count(c.dtype(x), out);
  Ints pos(out.size(), 0);
  for (size_t flat = 0; flat < count.data.size(); ++flat) {
    double n = 1;
    for (size_t d = 0; d < out.size(); ++d) n *= static_cast<double>(counted(d, pos[d]));
    count.data[flat] = n;
    for (size_t d = out.size(); d-- > 0;) {
      if (++pos[d] < out[d]) break;
      pos[d] = 0;
    }
  }
  ValueId sum = c.emit("mul", {mean, c.scalar(static_cast<double>(area), c.dtype(x))});
  return {c.emit("div", {sum, c.cx.constantValue(count)})};
}

}  // namespace

ValueId onnxConvolution(OnnxNode& c, ValueId x, ValueId wt, std::optional<ValueId> bias) {
  Ints ws = c.sizes(wt);
  if (ws.size() != c.rank(x) || ws.size() < 3) throw Error("the weight must be [M, C/group, kernel...] with the input's rank");
  Window w = windowOf(c, spatialOf(c, x), Ints(ws.begin() + 2, ws.end()), false);
  return convolve(c, x, wt, bias, w, c.attrInt("group", 1));
}

void addWindowImporters(OnnxImporters& m) {
  m["Conv"] = conv;
  m["ConvTranspose"] = convTranspose;
  m["MaxPool"] = maxPool;
  m["AveragePool"] = averagePool;
}

}  // namespace fusebox

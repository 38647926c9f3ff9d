// ONNX's Resize (and the older Upsample) as registry ops. Resizing is separable: each resized
// axis is a weighted sum of a few gathers along that axis, y = sum_k x[idx_k] * w_k, whose index
// and weight tables (one entry per output position) are computed here at import from the
// coordinate transformation and the interpolation mode: 1 tap for nearest, 2 for linear, 4 for
// cubic. The gathers are embedding lookups, so a resize differentiates like any other op.

#include <cmath>

#include "core/frontend/onnx/onnx_ops.h"
#include "core/ir/error.h"

namespace fusebox {

namespace {

using Ints = std::vector<int64_t>;

// The attributes that decide where output position o of an axis reads the input.
struct ResizeMode {
  std::string mode = "nearest";              // nearest, linear, cubic
  std::string coordinates = "half_pixel";    // coordinate_transformation_mode
  std::string nearest = "round_prefer_floor";
  double cubicA = -0.75;
  bool excludeOutside = false;
  double extrapolation = 0;
};

// One resized axis: in and out sizes, the scale (out / in, or as given), the resized length
// align_corners divides by (in * scale as ONNX defines it: given scales of 0.6 on 4 elements make
// 2 outputs over a length of 2.4), and tf_crop_and_resize's region of interest as fractions.
struct AxisResize {
  int64_t in = 0, out = 0;
  double scale = 1, length = 0;
  double roiStart = 0, roiEnd = 1;
};

AxisResize identityAxis(int64_t n) { return {n, n, 1.0, static_cast<double>(n), 0, 1}; }

// The input coordinate that output position o maps to.
double sourceCoordinate(const ResizeMode& m, const AxisResize& a, int64_t o) {
  double x = static_cast<double>(o), s = a.scale, n = static_cast<double>(a.in), out = static_cast<double>(a.out);
  const std::string& t = m.coordinates;
  if (t == "half_pixel") return (x + 0.5) / s - 0.5;
  if (t == "pytorch_half_pixel") return a.out > 1 ? (x + 0.5) / s - 0.5 : 0;
  if (t == "align_corners") return a.length == 1 ? 0 : x * (n - 1) / (a.length - 1);
  if (t == "asymmetric") return x / s;
  if (t == "tf_half_pixel_for_nn") return (x + 0.5) / s;
  if (t == "half_pixel_symmetric") {
    double adjustment = std::floor(n * s) / (n * s), offset = n / 2 * (1 - adjustment);
    return offset + (x + 0.5) / s - 0.5;
  }
  if (t == "tf_crop_and_resize")
    return a.out > 1 ? a.roiStart * (n - 1) + x * (a.roiEnd - a.roiStart) * (n - 1) / (out - 1)
                     : 0.5 * (a.roiStart + a.roiEnd) * (n - 1);
  throw OnnxUnsupported("coordinate_transformation_mode '" + t + "' is not supported");
}

int64_t nearestIndex(const ResizeMode& m, double x) {
  double f = std::floor(x);
  bool half = x - f == 0.5;
  if (m.nearest == "round_prefer_floor") return static_cast<int64_t>(half ? f : std::round(x));
  if (m.nearest == "round_prefer_ceil") return static_cast<int64_t>(half ? f + 1 : std::round(x));
  if (m.nearest == "floor") return static_cast<int64_t>(f);
  if (m.nearest == "ceil") return static_cast<int64_t>(std::ceil(x));
  throw OnnxUnsupported("nearest_mode '" + m.nearest + "' is not supported");
}

// Keys' cubic convolution kernel with parameter A at distance d.
double cubicWeight(double d, double A) {
  d = std::fabs(d);
  if (d <= 1) return ((A + 2) * d - (A + 3)) * d * d + 1;
  if (d < 2) return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A;
  return 0;
}

// Tap k of every output position: the input index it reads and its weight; `outside` marks the
// positions tf_crop_and_resize maps outside the input (they take extrapolation_value).
struct Taps {
  std::vector<Ints> index;
  std::vector<std::vector<double>> weight;
  std::vector<bool> outside;
};

Taps tapsOf(const ResizeMode& m, const AxisResize& a) {
  size_t k = m.mode == "nearest" ? 1 : m.mode == "linear" ? 2 : 4;
  Taps t{std::vector<Ints>(k, Ints(static_cast<size_t>(a.out))),
         std::vector<std::vector<double>>(k, std::vector<double>(static_cast<size_t>(a.out))),
         std::vector<bool>(static_cast<size_t>(a.out))};
  int64_t last = a.in - 1;
  auto clampIndex = [&](int64_t i) { return std::clamp<int64_t>(i, 0, last); };
  for (int64_t o = 0; o < a.out; ++o) {
    size_t oi = static_cast<size_t>(o);
    double x = sourceCoordinate(m, a, o);
    if (m.coordinates == "tf_crop_and_resize" && (x < 0 || x > static_cast<double>(last))) {
      t.outside[oi] = true;  // index 0 with weight 0
      continue;
    }
    if (m.mode == "nearest") {
      t.index[0][oi] = clampIndex(nearestIndex(m, x));
      t.weight[0][oi] = 1;
    } else if (m.mode == "linear") {
      x = std::clamp(x, 0.0, static_cast<double>(last));
      int64_t x0 = static_cast<int64_t>(std::floor(x));
      double frac = x - static_cast<double>(x0);
      t.index[0][oi] = x0;
      t.index[1][oi] = std::min(x0 + 1, last);
      t.weight[0][oi] = 1 - frac;
      t.weight[1][oi] = frac;
    } else {
      int64_t x0 = static_cast<int64_t>(std::floor(x));
      double frac = x - static_cast<double>(x0), total = 0;
      for (size_t j = 0; j < 4; ++j) {
        int64_t at = x0 - 1 + static_cast<int64_t>(j);
        double w = cubicWeight(frac - (static_cast<double>(j) - 1), m.cubicA);
        if (m.excludeOutside && (at < 0 || at > last)) w = 0;
        t.index[j][oi] = clampIndex(at);
        t.weight[j][oi] = w;
        total += w;
      }
      if (m.excludeOutside && total != 0)
        for (size_t j = 0; j < 4; ++j) t.weight[j][oi] /= total;
    }
  }
  return t;
}

// x resized along `axis` by the taps: sum_k gather(x, idx_k) * w_k (weights broadcast along axis).
ValueId resizeAxis(OnnxNode& c, const ResizeMode& m, ValueId x, size_t axis, const AxisResize& a) {
  OnnxContext::checkBuildable({a.out}, "a resize table");
  Taps taps = tapsOf(m, a);
  size_t rank = c.rank(x);
  DType t = c.dtype(x);
  Ints along(rank, 1);
  along[axis] = a.out;
  auto table = [&](const std::vector<double>& v, DType dt, const Ints& sizes) { return c.cx.constantValue(Tensor(dt, sizes, v)); };
  bool anyOutside = std::find(taps.outside.begin(), taps.outside.end(), true) != taps.outside.end();
  ValueId y = kNoId;
  for (size_t k = 0; k < taps.index.size(); ++k) {
    std::vector<double> idx(taps.index[k].begin(), taps.index[k].end());
    ValueId picked = onnxGatherAlong(c, x, axis, table(idx, DType::I64, {a.out}));
    bool unitWeights = std::all_of(taps.weight[k].begin(), taps.weight[k].end(), [](double w) { return w == 1; });
    if (!unitWeights || anyOutside) picked = c.emit("mul", {picked, table(taps.weight[k], t, along)});
    y = y == kNoId ? picked : c.emit("add", {y, picked});
  }
  if (anyOutside && m.extrapolation != 0) {
    std::vector<double> fill(taps.outside.size());
    for (size_t i = 0; i < fill.size(); ++i) fill[i] = taps.outside[i] ? m.extrapolation : 0;
    y = c.emit("add", {y, table(fill, t, along)});
  }
  return y;
}

// floor(n * scale) in float32 as onnxruntime computes it: scales are f32, and 5 * 2.6f is 13 in
// f32 (PyTorch's size for a scale factor of 2.6) but 12.9999995 in double.
double floorOfScaled(int64_t n, double scale) {
  return std::floor(static_cast<double>(static_cast<float>(n) * static_cast<float>(scale)));
}

// A float input of one value per axis (scales, roi), or nothing when absent or empty.
std::vector<double> floatsInput(OnnxNode& c, int i, const char* what) {
  if (!c.has(i)) return {};
  const Tensor& t = c.constantInput(i, what);
  return std::vector<double>(t.data.begin(), t.data.end());
}

void resizeInto(OnnxNode& c, ValueId& x, const ResizeMode& m, std::vector<AxisResize>& axes) {
  for (size_t d = 0; d < axes.size(); ++d) {
    AxisResize& a = axes[d];
    if (a.out == a.in && a.scale == 1 && m.coordinates != "tf_crop_and_resize") continue;
    if (a.in == 0 || a.out <= 0) throw OnnxUnsupported("resizing to or from zero elements is not supported");
    x = resizeAxis(c, m, x, d, a);
  }
}

OnnxOutputs resize(OnnxNode& c) {
  ValueId x = c.in(0);
  Ints in = c.sizes(x);
  size_t rank = in.size();
  ResizeMode m;
  m.mode = c.attrString("mode", "nearest");
  if (m.mode != "nearest" && m.mode != "linear" && m.mode != "cubic") throw OnnxUnsupported("mode '" + m.mode + "' is not supported");
  m.coordinates = c.attrString("coordinate_transformation_mode", c.cx.opset >= 11 ? "half_pixel" : "asymmetric");
  m.nearest = c.attrString("nearest_mode", "round_prefer_floor");
  m.cubicA = c.attrFloat("cubic_coeff_a", -0.75);
  m.excludeOutside = c.attrInt("exclude_outside", 0) != 0;
  m.extrapolation = c.attrFloat("extrapolation_value", 0);
  if (c.cx.opset < 11 && m.mode == "linear") m.coordinates = "asymmetric";  // opset 10: no attribute, asymmetric
  if (m.mode != "nearest" && !isFloating(c.dtype(x))) throw OnnxUnsupported(m.mode + " resizing of integers is not supported");

  // Opset 10: (X, scales); 11+: (X, roi, scales, sizes), of the listed axes (opset 18) or all.
  int scalesAt = c.cx.opset < 11 ? 1 : 2, sizesAt = 3, roiAt = 1;
  Ints axesAttr = c.attrInts("axes");
  Ints axes;
  for (int64_t a : axesAttr) axes.push_back(c.axis(a, rank));
  if (axes.empty())
    for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  std::vector<double> scales = floatsInput(c, scalesAt, "Resize's scales");
  Ints sizes = c.cx.opset >= 11 && c.has(sizesAt) ? c.intsInput(sizesAt, "Resize's sizes") : Ints{};
  if (scales.empty() == sizes.empty()) throw Error("exactly one of scales and sizes must be given");
  size_t given = scales.empty() ? sizes.size() : scales.size();
  if (given != axes.size()) throw Error("scales or sizes must have one entry per resized axis (" + std::to_string(axes.size()) + ")");

  std::vector<AxisResize> plan(rank);
  for (size_t d = 0; d < rank; ++d) plan[d] = identityAxis(in[d]);
  if (!scales.empty()) {
    for (size_t i = 0; i < axes.size(); ++i) {
      AxisResize& a = plan[static_cast<size_t>(axes[i])];
      if (!(scales[i] > 0) || !std::isfinite(scales[i])) throw Error("scales must be positive");
      a.scale = scales[i];
      a.length = static_cast<double>(a.in) * a.scale;
      double out = floorOfScaled(a.in, a.scale);
      if (out > static_cast<double>(kMaxImportedElements)) throw Error("the resized dim is too large");
      a.out = static_cast<int64_t>(out);
    }
  } else {
    std::string policy = c.attrString("keep_aspect_ratio_policy", "stretch");
    double common = policy == "not_larger" ? INFINITY : 0;
    for (size_t i = 0; i < axes.size(); ++i) {
      if (sizes[i] <= 0) throw Error("sizes must be positive");
      double s = static_cast<double>(sizes[i]) / static_cast<double>(in[static_cast<size_t>(axes[i])]);
      if (policy == "not_larger") common = std::min(common, s);
      else if (policy == "not_smaller") common = std::max(common, s);
      else if (policy != "stretch") throw OnnxUnsupported("keep_aspect_ratio_policy '" + policy + "' is not supported");
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      AxisResize& a = plan[static_cast<size_t>(axes[i])];
      if (policy == "stretch") {
        a.out = sizes[i];
        a.scale = static_cast<double>(a.out) / static_cast<double>(a.in);
      } else {
        a.scale = common;
        a.out = static_cast<int64_t>(std::floor(static_cast<double>(a.in) * common + 0.5));
      }
      a.length = static_cast<double>(a.out);
    }
  }
  if (c.attrInt("antialias", 0) != 0 && m.mode != "nearest")
    for (size_t d = 0; d < rank; ++d)
      if (plan[d].scale < 1) throw OnnxUnsupported("antialiased downsampling is not supported");
  if (m.coordinates == "tf_crop_and_resize") {
    std::vector<double> roi = floatsInput(c, roiAt, "Resize's roi");
    if (roi.size() != 2 * axes.size()) throw Error("tf_crop_and_resize needs a roi of 2 entries per resized axis");
    for (size_t i = 0; i < axes.size(); ++i) {
      plan[static_cast<size_t>(axes[i])].roiStart = roi[i];
      plan[static_cast<size_t>(axes[i])].roiEnd = roi[i + axes.size()];
    }
  }
  resizeInto(c, x, m, plan);
  return {x};
}

// Upsample (opsets 7-9): nearest or linear by scales (an attribute, then an input), asymmetric.
OnnxOutputs upsample(OnnxNode& c) {
  ValueId x = c.in(0);
  Ints in = c.sizes(x);
  ResizeMode m;
  m.mode = c.attrString("mode", "nearest");
  if (m.mode != "nearest" && m.mode != "linear") throw OnnxUnsupported("mode '" + m.mode + "' is not supported");
  m.coordinates = "asymmetric";
  m.nearest = "floor";
  std::vector<double> scales;
  if (std::ssize(c.n.inputs) > 1) scales = floatsInput(c, 1, "Upsample's scales");
  else
    for (float f : c.attr("scales") ? c.attr("scales")->floats : std::vector<float>()) scales.push_back(f);
  if (scales.size() != in.size()) throw Error("scales must have one entry per dim");
  std::vector<AxisResize> plan(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    if (!(scales[d] > 0) || !std::isfinite(scales[d])) throw Error("scales must be positive");
    double out = floorOfScaled(in[d], scales[d]);
    if (out > static_cast<double>(kMaxImportedElements)) throw Error("the upsampled dim is too large");
    plan[d] = {in[d], static_cast<int64_t>(out), scales[d], static_cast<double>(in[d]) * scales[d], 0, 1};
  }
  resizeInto(c, x, m, plan);
  return {x};
}

}  // namespace

void addResizeImporters(OnnxImporters& m) {
  m["Resize"] = resize;
  m["Upsample"] = upsample;
}

}  // namespace fusebox

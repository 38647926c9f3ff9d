// GridSample (2-D): each output point samples X [N, C, H, W] at the grid's normalized (x, y).
// Per axis the coordinate is denormalized (align_corners), rounded for nearest, moved inside by
// the padding mode (border clamps, reflection folds), and split into taps (1 nearest, 2 linear,
// 4 cubic with A = -0.75) of an index, a weight and a validity (zeros padding reads 0 outside);
// every (y tap, x tap) pair gathers X by a run-time flat index, as onnxruntime and PyTorch do.

#include <cmath>

#include "core/frontend/onnx/onnx_ops.h"
#include "core/ir/error.h"

namespace fusebox {

namespace {

using Ints = std::vector<int64_t>;

enum class Padding { Zeros, Border, Reflection };

struct Tap {
  ValueId index, weight, valid;  // i64, f32, bool (kNoId: always valid)
};

struct Sampler {
  OnnxNode& c;
  Padding padding;
  bool alignCorners;

  ValueId k(double v) { return c.scalar(v, DType::F32); }
  ValueId op(const char* name, std::vector<ValueId> in) { return c.emit(name, std::move(in)); }

  // Folds v into [lo, hi] by reflecting at the nearer border as often as needed.
  ValueId reflect(ValueId v, double lo, double hi) {
    double range = hi - lo;
    if (range <= 0) return c.emit("expand", {k(lo)}, {{"shape", c.shape(v)}});
    auto fold = [&](ValueId dx, double near, double far, double sign) {  // near + sign * r for even n, far - sign * r for odd
      ValueId n = op("floor", {op("div", {dx, k(range)})});
      ValueId r = op("sub", {dx, op("mul", {n, k(range)})});
      ValueId odd = op("ne", {op("sub", {n, op("mul", {op("floor", {op("div", {n, k(2)})}), k(2)})}), k(0)});
      return op("where", {odd, op("sub", {k(far), op("mul", {k(sign), r})}), op("add", {k(near), op("mul", {k(sign), r})})});
    };
    ValueId below = fold(op("sub", {k(lo), v}), lo, hi, 1);
    ValueId above = fold(op("sub", {v, k(hi)}), hi, lo, -1);
    return op("where", {op("lt", {v, k(lo)}), below, op("where", {op("gt", {v, k(hi)}), above, v})});
  }

  // The tap at integer position i (a float) of an axis of d pixels.
  Tap tap(ValueId i, ValueId weight, int64_t d) {
    double lo = alignCorners ? 0 : -0.5, hi = alignCorners ? static_cast<double>(d) - 1 : static_cast<double>(d) - 0.5;
    switch (padding) {
      case Padding::Zeros: {
        ValueId inside = onnxClamp(c, i, 0, static_cast<double>(d - 1));
        return {c.cast(inside, DType::I64), weight, op("eq", {inside, i})};  // read at the clamped index, weighted 0
      }
      case Padding::Border: return {c.cast(onnxClamp(c, i, 0, static_cast<double>(d - 1)), DType::I64), weight, kNoId};
      case Padding::Reflection: return {c.cast(onnxClamp(c, reflect(i, lo, hi), 0, static_cast<double>(d - 1)), DType::I64), weight, kNoId};
    }
    return {};
  }

  // The taps of normalized coordinate n along an axis of d pixels.
  std::vector<Tap> taps(ValueId n, int64_t d, const std::string& mode) {
    double dd = static_cast<double>(d);
    ValueId v = alignCorners ? op("mul", {op("div", {op("add", {n, k(1)}), k(2)}), k(dd - 1)})
                             : op("div", {op("sub", {op("mul", {op("add", {n, k(1)}), k(dd)}), k(1)}), k(2)});
    if (mode == "nearest") v = op("round", {v});
    double lo = alignCorners ? 0 : -0.5, hi = alignCorners ? dd - 1 : dd - 0.5;
    // Border clamps the coordinate itself, except for cubic taps, which are clamped one by one
    // (PyTorch's grid_sampler, and onnxruntime: ONNX's reference clamps the coordinate first).
    if (padding == Padding::Border && mode != "cubic") v = onnxClamp(c, v, 0, dd - 1);
    if (padding == Padding::Reflection) v = reflect(v, lo, hi);
    if (mode == "nearest") {
      ValueId truncated = op("where", {op("lt", {v, k(0)}), op("neg", {op("floor", {op("neg", {v})})}), op("floor", {v})});
      return {tap(truncated, c.emit("expand", {k(1)}, {{"shape", c.shape(v)}}), d)};
    }
    ValueId x0 = op("floor", {v}), t = op("sub", {v, x0});
    if (mode == "linear") return {tap(x0, op("sub", {k(1), t}), d), tap(op("add", {x0, k(1)}), t, d)};
    // Keys' cubic convolution, A = -0.75, at distances 1 + t, t, 1 - t, 2 - t
    const double a = -0.75;
    auto far = [&](ValueId s) {  // ((a s - 5a) s + 8a) s - 4a for 1 <= s <= 2
      return op("sub", {op("mul", {op("add", {op("mul", {op("sub", {op("mul", {k(a), s}), k(5 * a)}), s}), k(8 * a)}), s}), k(4 * a)});
    };
    auto near = [&](ValueId s) {  // ((a + 2) s - (a + 3)) s^2 + 1 for s <= 1
      return op("add", {op("mul", {op("sub", {op("mul", {k(a + 2), s}), k(a + 3)}), op("mul", {s, s})}), k(1)});
    };
    std::vector<Tap> out;
    ValueId weights[4] = {far(op("add", {t, k(1)})), near(t), near(op("sub", {k(1), t})), far(op("sub", {k(2), t}))};
    for (int j = 0; j < 4; ++j) out.push_back(tap(op("add", {x0, k(j - 1)}), weights[j], d));
    return out;
  }
};

OnnxOutputs gridSample(OnnxNode& c) {
  ValueId x = c.in(0), grid = c.in(1);
  Ints xs = c.sizes(x), gs = c.sizes(grid);
  if (xs.size() != 4 || gs.size() != 4 || gs[3] != 2 || gs[0] != xs[0])
    throw OnnxUnsupported("GridSample of other than 2-D images (X [N, C, H, W], grid [N, H_out, W_out, 2]) is not supported");
  if (!isFloating(c.dtype(x))) throw Error("GridSample's X must be floating point");
  std::string mode = c.attrString("mode", c.cx.opset >= 20 ? "linear" : "bilinear");
  if (mode == "bilinear") mode = "linear";
  if (mode == "bicubic") mode = "cubic";
  if (mode != "linear" && mode != "nearest" && mode != "cubic") throw Error("GridSample's mode must be linear, nearest or cubic, not '" + mode + "'");
  std::string pad = c.attrString("padding_mode", "zeros");
  Padding padding = pad == "zeros" ? Padding::Zeros : pad == "border" ? Padding::Border : pad == "reflection" ? Padding::Reflection
                                                                                                               : throw Error("unknown padding_mode '" + pad + "'");
  Sampler s{c, padding, c.attrInt("align_corners", 0) != 0};
  DType t = c.dtype(x);
  int64_t n = xs[0], channels = xs[1], h = xs[2], w = xs[3], points = gs[1] * gs[2];
  ValueId g = c.cast(grid, DType::F32);
  auto coordinate = [&](int64_t i) {
    return c.reshape(c.emit("slice", {g}, {{"dim", int64_t{3}}, {"start", i}, {"end", i + 1}, {"step", int64_t{1}}}), {n, points});
  };
  std::vector<Tap> ys = s.taps(coordinate(1), h, mode), xsTaps = s.taps(coordinate(0), w, mode);
  ValueId image = c.reshape(x, {n, channels, h * w});
  ValueId sum = kNoId;
  for (const Tap& ty : ys)
    for (const Tap& tx : xsTaps) {
      ValueId flat = c.emit("add", {c.emit("mul", {ty.index, c.scalar(static_cast<double>(w), DType::I64)}), tx.index});
      ValueId idx = c.emit("expand", {c.reshape(flat, {n, 1, points})}, {{"shape", shapeOf({n, channels, points})}});
      ValueId picked = onnxGatherElements(c, image, idx, 2);
      ValueId weight = c.emit("mul", {ty.weight, tx.weight});
      for (ValueId valid : {ty.valid, tx.valid})
        if (valid != kNoId) weight = c.emit("where", {valid, weight, s.k(0)});
      ValueId term = c.emit("mul", {picked, c.cast(c.reshape(weight, {n, 1, points}), t)});
      sum = sum == kNoId ? term : c.emit("add", {sum, term});
    }
  return {c.reshape(sum, {n, channels, gs[1], gs[2]})};
}

}  // namespace

void addGridSampleImporters(OnnxImporters& m) { m["GridSample"] = gridSample; }

}  // namespace fusebox

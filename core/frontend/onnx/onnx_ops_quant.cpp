// Linear quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, and the integer
// and quantized matmuls and convolutions (MatMulInteger, ConvInteger, QLinearMatMul,
// QLinearConv). Quantized values are i32 tensors saturated to their ONNX type's range (uint8,
// int8, ...: OnnxContext::elemTypes); integer products accumulate exactly (f64 matmuls, f32
// convolutions of small integers), then requantize in f32 with ties to even, as onnxruntime does.
#include <cmath>

#include "core/frontend/onnx/onnx_ops.h"
#include "core/ir/error.h"

namespace fusebox {

namespace {

struct IntRange {
  double lo, hi;
};

IntRange rangeOf(int onnxType) {
  switch (onnxType) {
    case proto::UINT8: return {0, 255};
    case proto::INT8: return {-128, 127};
    case proto::UINT16: return {0, 65535};
    case proto::INT16: return {-32768, 32767};
    case proto::INT32: return {-2147483648.0, 2147483647.0};
    default: throw OnnxUnsupported("quantization to ONNX element type " + std::to_string(onnxType) + " is not supported");
  }
}

// The ONNX type quantized values of node input i (a zero point) have; uint8 when unknown.
int quantizedType(OnnxNode& c, int i) {
  if (!c.has(i)) return proto::UINT8;
  auto it = c.cx.elemTypes.find(c.n.inputs[i]);
  return it == c.cx.elemTypes.end() ? proto::UINT8 : it->second;
}

// A scale or zero point: a scalar as it is, a 1-D tensor shaped to broadcast along `axis` (negative
// from the end) of a rank-`rank` tensor (per-channel quantization).
ValueId perAxis(OnnxNode& c, ValueId v, int64_t axis, size_t rank) {
  std::vector<int64_t> s = c.sizes(v);
  if (s.empty() || (s.size() == 1 && s[0] == 1)) return v;
  if (s.size() != 1) throw OnnxUnsupported("blocked quantization (a scale of rank > 1) is not supported");
  std::vector<int64_t> shape(rank, 1);
  shape[static_cast<size_t>(c.axis(axis, rank))] = s[0];
  return c.reshape(v, shape);
}

ValueId asF32(OnnxNode& c, ValueId v) { return c.cast(v, DType::F32); }

// round-half-even(v) saturated to the type's range, as i32.
ValueId saturated(OnnxNode& c, ValueId v, int onnxType) {
  IntRange r = rangeOf(onnxType);
  return c.cast(onnxClamp(c, c.emit("round", {v}), r.lo, r.hi), DType::I32);
}

// saturate(round(x / scale) + zero_point), per-axis scale and zero point along `axis`.
ValueId quantize(OnnxNode& c, ValueId x, ValueId scale, std::optional<ValueId> zeroPoint, int64_t axis, int onnxType) {
  size_t rank = c.rank(x);
  ValueId q = c.emit("round", {c.emit("div", {asF32(c, x), perAxis(c, asF32(c, scale), axis, rank)})});
  if (zeroPoint) q = c.emit("add", {q, perAxis(c, asF32(c, *zeroPoint), axis, rank)});
  return saturated(c, q, onnxType);
}

// (x - zero_point) * scale in f32.
ValueId dequantize(OnnxNode& c, ValueId x, ValueId scale, std::optional<ValueId> zeroPoint, int64_t axis) {
  size_t rank = c.rank(x);
  ValueId v = asF32(c, x);
  if (zeroPoint) v = c.emit("sub", {v, perAxis(c, asF32(c, *zeroPoint), axis, rank)});
  return c.emit("mul", {v, perAxis(c, asF32(c, scale), axis, rank)});
}

std::optional<ValueId> optionalIn(OnnxNode& c, int i) { return c.has(i) ? std::optional<ValueId>(c.in(i)) : std::nullopt; }

int64_t quantAxis(OnnxNode& c) {
  if (c.attrInt("block_size", 0) != 0) throw OnnxUnsupported("blocked quantization (block_size) is not supported");
  return c.attrInt("axis", 1);
}

// v - zero_point as f64, the zero point per row (a [M] one for the left operand, `rowWise`) or
// per column ([N], the right operand) of a matrix.
ValueId centered(OnnxNode& c, ValueId v, std::optional<ValueId> zeroPoint, bool rowWise) {
  ValueId d = c.cast(v, DType::F64);
  if (!zeroPoint) return d;
  ValueId zp = c.cast(*zeroPoint, DType::F64);
  std::vector<int64_t> s = c.sizes(zp);
  if (rowWise && s.size() == 1 && s[0] > 1) zp = c.reshape(zp, {s[0], 1});
  return c.emit("sub", {d, zp});
}

OnnxOutputs quantizeLinear(OnnxNode& c) {
  ValueId x = c.in(0);
  int type = c.attr("output_dtype") && c.attrInt("output_dtype", 0) ? static_cast<int>(c.attrInt("output_dtype", 0)) : quantizedType(c, 2);
  return {quantize(c, x, c.in(1), optionalIn(c, 2), quantAxis(c), type)};
}

OnnxOutputs dequantizeLinear(OnnxNode& c) {
  ValueId x = c.in(0);
  return {dequantize(c, x, c.in(1), optionalIn(c, 2), quantAxis(c))};
}

// uint8 with a scale and zero point chosen so that [min(x, 0), max(x, 0)] spans [0, 255].
OnnxOutputs dynamicQuantizeLinear(OnnxNode& c) {
  ValueId x = asF32(c, c.in(0));
  ValueId zero = c.scalar(0, DType::F32);
  std::vector<int64_t> all;
  for (size_t d = 0; d < c.rank(x); ++d) all.push_back(static_cast<int64_t>(d));
  auto whole = [&](const char* op) { return c.emit(op, {x}, {{"dim", all}, {"keepdim", false}}); };
  ValueId lo = c.emit("minimum", {whole("amin"), zero}), hi = c.emit("maximum", {whole("amax"), zero});
  ValueId scale = c.emit("div", {c.emit("sub", {hi, lo}), c.scalar(255, DType::F32)});
  ValueId zeroPoint = saturated(c, c.emit("sub", {zero, c.emit("div", {lo, scale})}), proto::UINT8);
  return {quantize(c, x, scale, zeroPoint, 0, proto::UINT8), scale, zeroPoint};
}

OnnxOutputs matMulInteger(OnnxNode& c) {
  ValueId a = centered(c, c.in(0), optionalIn(c, 2), true), b = centered(c, c.in(1), optionalIn(c, 3), false);
  return {c.cast(c.emit("matmul", {a, b}), DType::I32)};
}

OnnxOutputs qLinearMatMul(OnnxNode& c) {
  ValueId a = centered(c, c.in(0), c.in(2), true), b = centered(c, c.in(3), c.in(5), false);
  ValueId acc = asF32(c, c.emit("matmul", {a, b}));
  ValueId aScale = asF32(c, c.in(1));
  if (std::vector<int64_t> s = c.sizes(aScale); s.size() == 1 && s[0] > 1) aScale = c.reshape(aScale, {s[0], 1});
  ValueId multiplier = c.emit("div", {c.emit("mul", {aScale, asF32(c, c.in(4))}), asF32(c, c.in(6))});
  ValueId y = c.emit("add", {c.emit("round", {c.emit("mul", {acc, multiplier})}), asF32(c, c.in(7))});
  return {saturated(c, y, quantizedType(c, 7))};
}

// x - x_zero_point and w - w_zero_point (per output channel) in f32: products of 8-bit values
// summed over a window stay exact in f32 below 2^24.
std::pair<ValueId, ValueId> centeredConvOperands(OnnxNode& c, int x, std::optional<ValueId> xZero, int w, std::optional<ValueId> wZero) {
  ValueId xv = asF32(c, c.in(x)), wv = asF32(c, c.in(w));
  if (xZero) xv = c.emit("sub", {xv, asF32(c, *xZero)});
  if (wZero) wv = c.emit("sub", {wv, perAxis(c, asF32(c, *wZero), 0, c.rank(wv))});
  return {xv, wv};
}

OnnxOutputs convInteger(OnnxNode& c) {
  auto [x, w] = centeredConvOperands(c, 0, optionalIn(c, 2), 1, optionalIn(c, 3));
  return {c.cast(c.emit("round", {onnxConvolution(c, x, w, std::nullopt)}), DType::I32)};
}

OnnxOutputs qLinearConv(OnnxNode& c) {
  auto [x, w] = centeredConvOperands(c, 0, c.in(2), 3, c.in(5));
  ValueId acc = onnxConvolution(c, x, w, std::nullopt);
  size_t rank = c.rank(acc);
  if (c.has(8)) acc = c.emit("add", {acc, perAxis(c, asF32(c, c.in(8)), 1, rank)});  // i32 bias in accumulator units
  ValueId multiplier = c.emit("div", {c.emit("mul", {asF32(c, c.in(1)), perAxis(c, asF32(c, c.in(4)), 1, rank)}), asF32(c, c.in(6))});
  ValueId y = c.emit("add", {c.emit("round", {c.emit("mul", {acc, multiplier})}), asF32(c, c.in(7))});
  return {saturated(c, y, quantizedType(c, 7))};
}

}  // namespace

void addQuantizationImporters(OnnxImporters& m) {
  m["QuantizeLinear"] = quantizeLinear;
  m["DequantizeLinear"] = dequantizeLinear;
  m["DynamicQuantizeLinear"] = dynamicQuantizeLinear;
  m["MatMulInteger"] = matMulInteger;
  m["QLinearMatMul"] = qLinearMatMul;
  m["ConvInteger"] = convInteger;
  m["QLinearConv"] = qLinearConv;
}

}  // namespace fusebox

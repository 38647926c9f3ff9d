// Discrete Fourier transforms (DFT, STFT) as matmuls with cosine and sine tables built at import:
// for a signal of length L along an axis, X[k] = sum_j x[j] e^(-2 pi i j k / L) (the inverse with
// +i and a 1/L), the last dim of size 1 (real) or 2 (real, imaginary) as ONNX lays them out.

#include <cmath>

#include "core/frontend/onnx/onnx_ops.h"
#include "core/ir/error.h"

namespace fusebox {

namespace {

using Ints = std::vector<int64_t>;

// x with dims a and b swapped.
ValueId swapped(OnnxNode& c, ValueId x, size_t a, size_t b) {
  if (a == b) return x;
  return c.emit("transpose", {x}, {{"dim0", static_cast<int64_t>(a)}, {"dim1", static_cast<int64_t>(b)}});
}

// [L, K] tables cos(2 pi j k / L) or sin(...).
ValueId table(OnnxNode& c, int64_t length, int64_t bins, bool sine, DType t) {
  OnnxContext::checkBuildable({length, bins}, "a DFT table");
  Tensor m(t, {length, bins});
  for (int64_t j = 0; j < length; ++j)
    for (int64_t k = 0; k < bins; ++k) {
      double angle = 2 * M_PI * static_cast<double>((j * k) % length) / static_cast<double>(length);
      m.data[static_cast<size_t>(j * bins + k)] = roundToDType(sine ? std::sin(angle) : std::cos(angle), t);
    }
  return c.cx.constantValue(m);
}

// The DFT of x [..., 1 | 2] along `axis` (not the last), zero-padded or cut to `length`.
ValueId dft(OnnxNode& c, ValueId x, size_t axis, int64_t length, bool inverse, bool onesided) {
  Ints xs = c.sizes(x);
  size_t rank = xs.size();
  if (rank < 2 || axis + 1 >= rank) throw Error("the DFT axis must be a signal dim, not the last (real/imaginary) one");
  if (xs.back() != 1 && xs.back() != 2) throw Error("the last dim of a DFT input must be 1 (real) or 2 (complex)");
  if (length < 1) throw Error("dft_length must be positive");
  if (onesided && inverse) throw OnnxUnsupported("a onesided inverse DFT is not supported");
  DType t = c.dtype(x);
  if (!isFloating(t)) throw Error("a DFT input must be floating point");
  int64_t bins = onesided ? length / 2 + 1 : length;
  // each component [..., signal], the signal dim last
  auto component = [&](int64_t i) {
    ValueId v = c.emit("slice", {x}, {{"dim", static_cast<int64_t>(rank - 1)}, {"start", i}, {"end", i + 1}, {"step", int64_t{1}}});
    v = c.reshape(v, Ints(xs.begin(), xs.end() - 1));
    v = swapped(c, v, axis, rank - 2);
    return c.padDim(v, rank - 2, 0, length - xs[axis], 0.0);  // a negative count cuts
  };
  ValueId cosT = table(c, length, bins, false, t), sinT = table(c, length, bins, true, t);
  ValueId re = component(0);
  ValueId outRe = c.emit("matmul", {re, cosT}), outIm = c.emit("neg", {c.emit("matmul", {re, sinT})});
  if (inverse) outIm = c.emit("neg", {outIm});
  if (xs.back() == 2) {
    ValueId im = component(1);
    ValueId imCos = c.emit("matmul", {im, cosT}), imSin = c.emit("matmul", {im, sinT});
    outRe = c.emit(inverse ? "sub" : "add", {outRe, imSin});
    outIm = c.emit("add", {outIm, imCos});
  }
  if (inverse) {
    ValueId scale = c.scalar(1.0 / static_cast<double>(length), t);
    outRe = c.emit("mul", {outRe, scale});
    outIm = c.emit("mul", {outIm, scale});
  }
  auto placed = [&](ValueId v) {
    v = swapped(c, v, axis, rank - 2);
    Ints s = c.sizes(v);
    s.push_back(1);
    return c.reshape(v, s);
  };
  return c.emit("cat", {placed(outRe), placed(outIm)}, {{"dim", static_cast<int64_t>(rank - 1)}});
}

OnnxOutputs dftNode(OnnxNode& c) {
  ValueId x = c.in(0);
  size_t rank = c.rank(x);
  int64_t axis = c.attrInt("axis", 1);
  if (c.cx.opset >= 20) axis = c.has(2) ? c.intsInput(2, "DFT's axis").at(0) : -2;
  size_t a = static_cast<size_t>(c.axis(axis, rank));
  int64_t length = c.has(1) ? c.intsInput(1, "dft_length").at(0) : c.sizes(x)[a];
  return {dft(c, x, a, length, c.attrInt("inverse", 0) != 0, c.attrInt("onesided", 0) != 0)};
}

// [batch, frames, bins, 2]: the DFT of each frame (frame_length samples every frame_step, times
// the window) of signal [batch, length, 1 | 2].
OnnxOutputs stft(OnnxNode& c) {
  ValueId signal = c.in(0);
  Ints ss = c.sizes(signal);
  if (ss.size() != 3) throw Error("STFT's signal must be [batch, length, 1 | 2]");
  int64_t step = c.intsInput(1, "STFT's frame_step").at(0);
  std::optional<ValueId> window;
  int64_t frame = 0;
  if (c.has(2)) {
    window = c.in(2);
    frame = c.sizes(*window).at(0);
  }
  if (c.has(3)) frame = c.intsInput(3, "STFT's frame_length").at(0);
  if (frame < 1 || step < 1 || frame > ss[1]) throw Error("STFT needs 1 <= frame_length <= the signal length and a positive frame_step");
  if (window && c.sizes(*window) != Ints{frame}) throw Error("STFT's window must have frame_length values");
  int64_t frames = (ss[1] - frame) / step + 1;
  OnnxContext::checkBuildable({frames, frame}, "an STFT frame table");
  std::vector<double> positions;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t j = 0; j < frame; ++j) positions.push_back(static_cast<double>(f * step + j));
  ValueId idx = c.cx.constantValue(Tensor(DType::I64, {frames, frame}, positions));
  ValueId framed = onnxGatherAlong(c, signal, 1, idx);  // [batch, frames, frame, 1 | 2]
  if (window) framed = c.emit("mul", {framed, c.reshape(c.cast(*window, c.dtype(signal)), {frame, 1})});
  return {dft(c, framed, 2, frame, false, c.attrInt("onesided", 1) != 0)};
}

}  // namespace

void addSpectralImporters(OnnxImporters& m) {
  m["DFT"] = dftNode;
  m["STFT"] = stft;
}

}  // namespace fusebox

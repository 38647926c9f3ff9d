// Selections whose output shape depends on values (Compress, NonZero: the model is specialized
// to those values, as torch.compile specializes on data-dependent shapes), ReverseSequence (a
// gather along time with indices computed from the run-time lengths), and Det (the Leibniz sum
// over permutations, for matrices up to 4x4).

#include <algorithm>
#include <numeric>

#include "core/frontend/onnx/onnx_ops.h"
#include "core/ir/error.h"

namespace fusebox {

namespace {

using Ints = std::vector<int64_t>;

// The slices of x along axis (x flattened when no axis is given) where condition is true.
OnnxOutputs compress(OnnxNode& c) {
  ValueId x = c.in(0);
  const Tensor& cond = c.constantInput(1, "Compress's condition");
  size_t axis = 0;
  if (c.attr("axis")) axis = static_cast<size_t>(c.axis(c.attrInt("axis", 0), c.rank(x)));
  else x = c.reshape(x, {numelOf(c.sizes(x))});
  int64_t n = c.sizes(x)[axis];
  if (static_cast<int64_t>(cond.data.size()) > n) throw Error("Compress's condition is longer than the axis");
  std::vector<double> kept;
  for (size_t i = 0; i < cond.data.size(); ++i)
    if (cond.data[i] != 0) kept.push_back(static_cast<double>(i));
  return {onnxGatherPositions(c, x, axis, kept)};
}

// [rank, count]: the coordinates of every nonzero element, in row-major order.
OnnxOutputs nonZero(OnnxNode& c) {
  const Tensor& x = c.constantInput(0, "NonZero's input");
  size_t rank = x.sizes.size();
  std::vector<std::vector<double>> coords(std::max<size_t>(rank, 1));
  for (size_t i = 0; i < x.data.size(); ++i) {
    if (x.data[i] == 0) continue;
    size_t rest = i;
    for (size_t d = rank; d-- > 0;) {
      coords[d].push_back(static_cast<double>(rest % static_cast<size_t>(x.sizes[d])));
      rest /= static_cast<size_t>(x.sizes[d]);
    }
    if (rank == 0) coords[0].push_back(0);
  }
  std::vector<double> flat;
  for (const auto& row : coords) flat.insert(flat.end(), row.begin(), row.end());
  return {c.cx.constantValue(Tensor(DType::I64, {static_cast<int64_t>(coords.size()), static_cast<int64_t>(coords[0].size())}, flat))};
}

// out[t, b] = x[len[b] - 1 - t, b] for t < len[b], else x[t, b] (time and batch axes as given).
OnnxOutputs reverseSequence(OnnxNode& c) {
  ValueId x = c.in(0);
  size_t rank = c.rank(x);
  if (rank < 2) throw Error("ReverseSequence needs an input of rank 2 or more");
  size_t timeAxis = static_cast<size_t>(c.axis(c.attrInt("time_axis", 0), rank));
  size_t batchAxis = static_cast<size_t>(c.axis(c.attrInt("batch_axis", 1), rank));
  if (timeAxis == batchAxis || timeAxis > 1 || batchAxis > 1) throw Error("time_axis and batch_axis must be 0 and 1 in some order");
  Ints xs = c.sizes(x);
  ValueId lens = c.cast(c.in(1), DType::I64);
  if (c.sizes(lens) != Ints{xs[batchAxis]}) throw Error("sequence_lens must have one length per batch entry");
  Ints lensShape(rank, 1);
  lensShape[batchAxis] = xs[batchAxis];
  ValueId len = c.reshape(lens, lensShape);
  ValueId t = c.iota(xs[timeAxis], timeAxis, rank, DType::I64);
  ValueId reversed = c.emit("sub", {c.emit("sub", {len, c.scalar(1, DType::I64)}), t});
  ValueId idx = c.emit("where", {c.emit("lt", {t, len}), reversed, t});
  return {onnxGatherElements(c, x, c.emit("expand", {idx}, {{"shape", c.shape(x)}}), timeAxis)};
}

// det of [..., n, n] as the sum over permutations p of sign(p) * prod_i x[.., i, p(i)].
OnnxOutputs det(OnnxNode& c) {
  ValueId x = c.in(0);
  Ints xs = c.sizes(x);
  if (xs.size() < 2 || xs[xs.size() - 1] != xs[xs.size() - 2]) throw Error("Det needs [..., n, n] matrices");
  int64_t n = xs.back();
  if (n > 4) throw OnnxUnsupported("Det of matrices larger than 4x4 is not supported");
  Ints batch(xs.begin(), xs.end() - 2);
  ValueId rows = c.reshape(x, [&] { Ints s = batch; s.push_back(n * n); return s; }());
  int64_t last = static_cast<int64_t>(batch.size());
  auto element = [&](int64_t i, int64_t j) {
    ValueId e = c.emit("slice", {rows}, {{"dim", last}, {"start", i * n + j}, {"end", i * n + j + 1}, {"step", int64_t{1}}});
    return c.reshape(e, batch);
  };
  std::vector<int64_t> p(static_cast<size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  ValueId sum = kNoId;
  do {
    int inversions = 0;
    for (size_t i = 0; i < p.size(); ++i)
      for (size_t j = i + 1; j < p.size(); ++j) inversions += p[i] > p[j];
    ValueId term = element(0, p[0]);
    for (int64_t i = 1; i < n; ++i) term = c.emit("mul", {term, element(i, p[static_cast<size_t>(i)])});
    if (sum == kNoId) sum = inversions % 2 ? c.emit("neg", {term}) : term;
    else sum = c.emit(inversions % 2 ? "sub" : "add", {sum, term});
  } while (std::next_permutation(p.begin(), p.end()));
  return {sum};
}

}  // namespace

void addSelectionImporters(OnnxImporters& m) {
  m["Compress"] = compress;
  m["NonZero"] = nonZero;
  m["ReverseSequence"] = reverseSequence;
  m["Det"] = det;
}

}  // namespace fusebox

// ONNX's indexing ops beyond Gather as registry ops: GatherND and ScatterND through a flat row
// index (sum of index * stride, computed as an integer tensor in the graph), ScatterElements
// (and the old Scatter) through a one-hot of the indices along the axis, TopK as k rounds of
// "first maximum, then masked out" (k is a constant; each round is a reduction).

#include <cmath>

#include "core/frontend/onnx/onnx_ops.h"
#include "core/ir/error.h"

namespace fusebox {

namespace {

using Ints = std::vector<int64_t>;

// The most rounds TopK unrolls into (one reduction each).
constexpr int64_t kMaxTopK = 64;

ValueId both(OnnxNode& c, ValueId a, ValueId b) { return c.emit("where", {a, b, c.scalar(0, DType::Bool)}); }  // a and b

ValueId wrapped(OnnxNode& c, ValueId idx, ValueId n) {  // idx < 0 ? idx + n : idx
  DType t = c.dtype(idx);
  return c.emit("where", {c.emit("lt", {idx, c.scalar(0, t)}), c.emit("add", {idx, n}), idx});
}

// A flat row index into data viewed as [prod(sizes[0 : batch + k]), rest...] for indices
// [batch dims..., m..., k]: the batch position's offset plus sum_j wrap(idx[..., j]) * stride_j.
// Returns the index shaped as indices.shape[:-1].
ValueId flatRows(OnnxNode& c, const Ints& ds, ValueId idx, size_t batch) {
  Ints is = c.sizes(idx);
  if (is.empty()) throw Error("indices must have at least one dim");
  int64_t k = is.back();
  if (k < 1 || batch + static_cast<size_t>(k) > ds.size()) throw Error("the indices' last dim must be between 1 and data's rank minus batch_dims");
  for (size_t b = 0; b < batch; ++b)
    if (b >= is.size() - 1 || is[b] != ds[b]) throw Error("the batch dims of data and indices must match");
  idx = c.cast(idx, DType::I64);
  // sizes and strides of the k indexed dims, as [k] constants broadcast over the indices
  std::vector<double> sizes, strides(static_cast<size_t>(k));
  int64_t stride = 1;
  for (int64_t j = k - 1; j >= 0; --j) {
    strides[static_cast<size_t>(j)] = static_cast<double>(stride);
    stride *= ds[batch + static_cast<size_t>(j)];
  }
  for (int64_t j = 0; j < k; ++j) sizes.push_back(static_cast<double>(ds[batch + static_cast<size_t>(j)]));
  ValueId n = c.cx.constantValue(Tensor(DType::I64, {k}, sizes));
  ValueId terms = c.emit("mul", {wrapped(c, idx, n), c.cx.constantValue(Tensor(DType::I64, {k}, strides))});
  ValueId rows = c.emit("sum", {terms}, {{"dim", Ints{static_cast<int64_t>(is.size()) - 1}}, {"keepdim", false}});
  if (batch == 0) return rows;
  // + (flat batch position) * (rows per batch position)
  Ints bs(is.begin(), is.begin() + static_cast<std::ptrdiff_t>(batch));
  int64_t nb = numelOf(bs);
  OnnxContext::checkBuildable({nb}, "a batch-offset table");
  std::vector<double> offsets;
  for (int64_t b = 0; b < nb; ++b) offsets.push_back(static_cast<double>(b * stride));
  Ints shape = bs;
  shape.resize(is.size() - 1, 1);
  return c.emit("add", {rows, c.cx.constantValue(Tensor(DType::I64, shape, offsets))});
}

OnnxOutputs gatherND(OnnxNode& c) {
  ValueId data = c.in(0), idx = c.in(1);
  Ints ds = c.sizes(data), is = c.sizes(idx);
  size_t batch = static_cast<size_t>(c.attrInt("batch_dims", 0));
  if (batch >= ds.size() || batch >= is.size()) throw Error("batch_dims must be less than both ranks");
  ValueId rows = flatRows(c, ds, idx, batch);
  size_t indexed = batch + static_cast<size_t>(is.back());
  Ints rest(ds.begin() + static_cast<std::ptrdiff_t>(indexed), ds.end());
  int64_t nrows = numelOf(Ints(ds.begin(), ds.begin() + static_cast<std::ptrdiff_t>(indexed)));
  Ints table{nrows};
  table.insert(table.end(), rest.begin(), rest.end());
  ValueId picked = onnxGatherAlong(c, c.reshape(data, table), 0, rows);
  Ints out(is.begin(), is.end() - 1);
  out.insert(out.end(), rest.begin(), rest.end());
  return {c.reshape(picked, out)};
}

// data with updates written at indices (reduction none) or added there (add): the updates are
// summed into a zero table by rows (embedding_backward), and a count of hits per row picks
// between data and the written rows. mul, max and min combine a one-hot [m, rows, 1] of the
// indices with the updates and reduce over m.
OnnxOutputs scatterND(OnnxNode& c) {
  ValueId data = c.in(0), idx = c.in(1), updates = c.in(2);
  std::string reduction = c.attrString("reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" && reduction != "min")
    throw OnnxUnsupported("reduction '" + reduction + "' is not supported");
  Ints ds = c.sizes(data), is = c.sizes(idx);
  ValueId rows = flatRows(c, ds, idx, 0);
  size_t indexed = static_cast<size_t>(is.back());
  Ints rest(ds.begin() + static_cast<std::ptrdiff_t>(indexed), ds.end());
  int64_t nrows = numelOf(Ints(ds.begin(), ds.begin() + static_cast<std::ptrdiff_t>(indexed)));
  int64_t rowSize = numelOf(rest), m = numelOf(Ints(is.begin(), is.end() - 1));
  Ints want(is.begin(), is.end() - 1);
  want.insert(want.end(), rest.begin(), rest.end());
  if (c.sizes(updates) != want) throw Error("updates must be " + shapeStr(shapeOf(want)));
  DType t = c.dtype(data);
  if (!isFloating(t)) throw OnnxUnsupported("scattering into integer data is not supported");
  ValueId flatRowsIdx = c.reshape(rows, {m});
  ValueId written = c.emit("embedding_backward", {c.reshape(updates, {m, rowSize}), flatRowsIdx}, {{"num_weights", nrows}});
  ValueId flatData = c.reshape(data, {nrows, rowSize});
  ValueId y;
  if (reduction == "mul" || reduction == "max" || reduction == "min") {
    ValueId hit = c.emit("eq", {c.reshape(c.cast(flatRowsIdx, DType::I64), {m, 1, 1}), c.iota(nrows, 1, 3, DType::I64)});  // [m, rows, 1]
    ValueId u = c.reshape(updates, {m, 1, rowSize});
    double identity = reduction == "mul" ? 1.0 : reduction == "max" ? -INFINITY : INFINITY;
    const char* op = reduction == "mul" ? "prod" : reduction == "max" ? "amax" : "amin";
    ValueId combined = c.emit(op, {c.emit("where", {hit, u, c.scalar(identity, t)})}, {{"dim", Ints{0}}, {"keepdim", false}});
    y = reduction == "mul" ? c.emit("mul", {flatData, combined}) : c.emit(reduction == "max" ? "maximum" : "minimum", {flatData, combined});
  } else if (reduction == "add") {
    y = c.emit("add", {flatData, written});
  } else {
    ValueId ones = c.emit("full", {}, {{"shape", shapeOf({m, 1})}, {"value", 1.0}, {"dtype", std::string(dtypeName(t))}});
    ValueId hits = c.emit("embedding_backward", {ones, flatRowsIdx}, {{"num_weights", nrows}});
    y = c.emit("where", {c.emit("gt", {hits, c.scalar(0, t)}), written, flatData});
  }
  return {c.reshape(y, ds)};
}

// out = data, with out[.., idx[.., j, ..], ..] = updates[.., j, ..] along axis (or += for add):
// a one-hot [.., k, n, ..] of the indices against the axis positions picks each position's update.
OnnxOutputs scatterElements(OnnxNode& c) {
  ValueId data = c.in(0), idx = c.in(1), updates = c.in(2);
  std::string reduction = c.attrString("reduction", "none");
  if (reduction != "none" && reduction != "add") throw OnnxUnsupported("reduction '" + reduction + "' is not supported");
  Ints ds = c.sizes(data), is = c.sizes(idx);
  if (ds.size() != is.size() || c.sizes(updates) != is) throw Error("data, indices and updates must have the same rank, indices and updates the same shape");
  size_t axis = static_cast<size_t>(c.axis(c.attrInt("axis", 0), ds.size()));
  for (size_t i = 0; i < ds.size(); ++i)
    if (i != axis && ds[i] != is[i]) throw OnnxUnsupported("indices smaller than data outside the scatter axis are not supported");
  DType t = c.dtype(data);
  idx = c.cast(idx, DType::I64);
  idx = wrapped(c, idx, c.scalar(static_cast<double>(ds[axis]), DType::I64));
  Ints iu = is, uu = is;
  iu.insert(iu.begin() + static_cast<std::ptrdiff_t>(axis) + 1, 1);  // [.., k, 1, ..]
  ValueId hit = c.emit("eq", {c.reshape(idx, iu), c.iota(ds[axis], axis + 1, ds.size() + 1, DType::I64)});  // [.., k, n, ..]
  ValueId zero = c.scalar(0, t);
  ValueId contributions = c.emit("where", {hit, c.reshape(updates, iu), zero});
  Ints reduceK{static_cast<int64_t>(axis)};
  ValueId summed = c.emit("sum", {contributions}, {{"dim", reduceK}, {"keepdim", false}});
  if (reduction == "add") return {c.emit("add", {data, summed})};
  ValueId count = c.emit("sum", {c.cast(hit, t)}, {{"dim", reduceK}, {"keepdim", false}});
  return {c.emit("where", {c.emit("gt", {count, zero}), summed, data})};
}

// The k largest (or smallest) along axis, in order, with their first indices.
OnnxOutputs topK(OnnxNode& c) {
  ValueId x = c.in(0);
  Ints xs = c.sizes(x);
  size_t axis = static_cast<size_t>(c.axis(c.attrInt("axis", -1), xs.size()));
  Ints kv = c.cx.opset >= 10 ? c.intsInput(1, "TopK's K") : Ints{c.attrInt("k", 1)};
  if (kv.size() != 1 || kv[0] < 0 || kv[0] > xs[axis]) throw Error("K must be one value between 0 and the axis size " + std::to_string(xs[axis]));
  int64_t k = kv[0];
  if (k == 0) {  // two empty outputs
    Ints empty = xs;
    empty[axis] = 0;
    return {c.cx.constantValue(Tensor(c.dtype(x), empty)), c.cx.constantValue(Tensor(DType::I64, empty))};
  }
  if (k > kMaxTopK) throw OnnxUnsupported("K above " + std::to_string(kMaxTopK) + " is not supported");
  bool largest = c.attrInt("largest", 1) != 0;
  DType t = c.dtype(x);
  DType work = isFloating(t) ? t : DType::F64;
  ValueId v = c.cast(x, work);
  ValueId pos = c.iota(xs[axis], axis, xs.size(), work);
  ValueId past = c.scalar(static_cast<double>(xs[axis]), work);
  ValueId exhausted = c.scalar(largest ? -INFINITY : INFINITY, work);
  Ints ax{static_cast<int64_t>(axis)};
  std::vector<ValueId> values, indices;
  ValueId remaining = kNoId;  // 1 where an element is still a candidate
  for (int64_t r = 0; r < k; ++r) {
    ValueId candidates = remaining == kNoId ? v : c.emit("where", {remaining, v, exhausted});
    ValueId best = c.emit(largest ? "amax" : "amin", {candidates}, {{"dim", ax}, {"keepdim", true}});
    // the first position holding it (a NaN matches nothing: the first still-candidate position)
    ValueId isBest = c.emit("eq", {candidates, best});
    if (remaining != kNoId) isBest = both(c, isBest, remaining);
    ValueId at = c.emit("amin", {c.emit("where", {isBest, pos, past})}, {{"dim", ax}, {"keepdim", true}});
    ValueId taken = c.emit("eq", {pos, at});
    remaining = remaining == kNoId ? c.emit("ne", {pos, at}) : both(c, remaining, c.emit("ne", {pos, at}));
    // the value at that position (exact: a masked sum of the one element)
    ValueId value = c.emit("sum", {c.emit("where", {taken, v, c.scalar(0, work)})}, {{"dim", ax}, {"keepdim", true}});
    values.push_back(value);
    indices.push_back(at);
  }
  int64_t a = static_cast<int64_t>(axis);
  ValueId vals = values.size() == 1 ? values[0] : c.emit("cat", values, {{"dim", a}});
  ValueId idx = indices.size() == 1 ? indices[0] : c.emit("cat", indices, {{"dim", a}});
  return {c.cast(vals, t), c.cast(idx, DType::I64)};
}

}  // namespace

void addIndexImporters(OnnxImporters& m) {
  m["GatherND"] = gatherND;
  m["ScatterND"] = scatterND;
  m["ScatterElements"] = scatterElements;
  m["Scatter"] = scatterElements;  // opsets 9-10, the same op
  m["TopK"] = topK;
}

}  // namespace fusebox

// ONNX shape and data-movement ops as registry ops: reshapes and views, slicing and gathering,
// padding, tiling, triangular masks and casts.

#include <algorithm>

#include "core/frontend/onnx/onnx_ops.h"
#include "core/ir/error.h"

namespace fusebox {

namespace {

using Ints = std::vector<int64_t>;

DType castTarget(OnnxNode& c) { return onnxDType(static_cast<int>(c.attrInt("to", 1)), "Cast"); }

// Negative indices count from the end of a dim of `n` elements.
ValueId wrapIndices(OnnxNode& c, ValueId idx, int64_t n) {
  DType t = c.dtype(idx);
  if (!isInteger(t)) throw OnnxUnsupported("indices must be integers");
  return c.emit("where", {c.emit("lt", {idx, c.scalar(0, t)}), c.emit("add", {idx, c.scalar(static_cast<double>(n), t)}), idx});
}

ValueId permute(OnnxNode& c, ValueId x, const Ints& perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
  return identity ? x : c.emit("permute", {x}, {{"dims", perm}});
}

// A slice with a negative step: start clamped to [0, n-1], end to [-1, n-1] (after adding n to
// negative ones), positions start, start + step, ... above end, gathered by a constant index list.
ValueId reverseSlice(OnnxNode& c, ValueId x, size_t axis, int64_t start, int64_t end, int64_t step) {
  int64_t n = c.sizes(x)[axis];
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n - 1);
  end = std::clamp<int64_t>(end, -1, n - 1);
  std::vector<double> picks;
  for (int64_t i = start; i > end; i += step) picks.push_back(static_cast<double>(i));
  return onnxGatherPositions(c, x, axis, picks);
}

OnnxOutputs slice(OnnxNode& c) {
  ValueId x = c.in(0);
  Ints starts, ends, axes, steps;
  if (c.cx.opset < 10) {
    starts = c.attrInts("starts");
    ends = c.attrInts("ends");
    axes = c.attrInts("axes");
  } else {
    starts = c.intsInput(1, "Slice's starts");
    ends = c.intsInput(2, "Slice's ends");
    if (c.has(3)) axes = c.intsInput(3, "Slice's axes");
    if (c.has(4)) steps = c.intsInput(4, "Slice's steps");
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    throw Error("starts, ends, axes and steps must have the same length");
  for (size_t i = 0; i < starts.size(); ++i) {
    if (steps[i] == 0) throw Error("a slice step must not be zero");
    int64_t a = c.axis(axes[i], c.rank(x));
    x = steps[i] > 0 ? c.emit("slice", {x}, {{"dim", a}, {"start", starts[i]}, {"end", ends[i]}, {"step", steps[i]}})
                     : reverseSlice(c, x, static_cast<size_t>(a), starts[i], ends[i], steps[i]);
  }
  return {x};
}

OnnxOutputs gather(OnnxNode& c) {
  ValueId data = c.in(0);
  size_t axis = static_cast<size_t>(c.axis(c.attrInt("axis", 0), c.rank(data)));
  return {onnxGatherAlong(c, data, axis, wrapIndices(c, c.in(1), c.sizes(data)[axis]))};
}

}  // namespace

// The axis moves to the front, the rest flattens into rows of an embedding lookup, and the result
// is put back in place.
ValueId onnxGatherAlong(OnnxNode& c, ValueId data, size_t axis, ValueId idx) {
  Ints ds = c.sizes(data), is = c.sizes(idx);
  Ints perm{static_cast<int64_t>(axis)}, rest;
  for (size_t i = 0; i < ds.size(); ++i)
    if (i != axis) perm.push_back(static_cast<int64_t>(i)), rest.push_back(ds[i]);
  int64_t rowSize = numelOf(rest);
  ValueId table = c.reshape(permute(c, data, perm), {ds[axis], rowSize});
  ValueId flatIdx = c.reshape(idx, {numelOf(is)});
  ValueId rows = c.emit("embedding", {c.cast(flatIdx, DType::I64), table});
  Ints grouped = is;  // indices dims, then data's other dims
  grouped.insert(grouped.end(), rest.begin(), rest.end());
  ValueId y = c.reshape(rows, grouped);
  Ints back;
  for (size_t i = 0; i < axis; ++i) back.push_back(static_cast<int64_t>(is.size() + i));
  for (size_t i = 0; i < is.size(); ++i) back.push_back(static_cast<int64_t>(i));
  for (size_t i = axis; i < rest.size(); ++i) back.push_back(static_cast<int64_t>(is.size() + i));
  return permute(c, y, back);
}

ValueId onnxGatherPositions(OnnxNode& c, ValueId x, size_t axis, const std::vector<double>& positions) {
  Ints sizes = c.sizes(x);
  sizes[axis] = static_cast<int64_t>(positions.size());
  if (positions.empty()) return c.cx.constantValue(Tensor(c.dtype(x), sizes));  // nothing selected
  return onnxGatherAlong(c, x, axis, c.cx.constantValue(Tensor(DType::I64, {static_cast<int64_t>(positions.size())}, positions)));
}

namespace {

// out[.., j, ..] = data[.., idx[.., j, ..], ..] along axis, as a masked sum over a one-hot of the
// indices (the registry has no scatter to differentiate a direct gather by).
OnnxOutputs gatherElements(OnnxNode& c) {
  ValueId data = c.in(0);
  return {onnxGatherElements(c, data, c.in(1), static_cast<size_t>(c.axis(c.attrInt("axis", 0), c.rank(data))))};
}

}  // namespace

ValueId onnxGatherElements(OnnxNode& c, ValueId data, ValueId idx, size_t axis) {
  Ints ds = c.sizes(data), is = c.sizes(idx);
  if (ds.size() != is.size()) throw Error("data and indices must have the same rank");
  for (size_t i = 0; i < ds.size(); ++i)
    if (i != axis && ds[i] != is[i]) throw OnnxUnsupported("indices smaller than data outside the gather axis are not supported");
  idx = wrapIndices(c, idx, ds[axis]);
  Ints iu = is, du = ds;
  iu.insert(iu.begin() + static_cast<std::ptrdiff_t>(axis) + 1, 1);  // [.., k, 1, ..]
  du.insert(du.begin() + static_cast<std::ptrdiff_t>(axis), 1);      // [.., 1, n, ..]
  ValueId hit = c.emit("eq", {c.reshape(idx, iu), c.iota(ds[axis], axis + 1, ds.size() + 1, c.dtype(idx))});
  ValueId picked = c.emit("where", {hit, c.reshape(data, du), c.scalar(0, c.dtype(data))});
  return c.emit("sum", {picked}, {{"dim", Ints{static_cast<int64_t>(axis) + 1}}, {"keepdim", false}});
}

namespace {

OnnxOutputs split(OnnxNode& c) {
  ValueId x = c.in(0);
  Ints s = c.sizes(x);
  int64_t axis = c.axis(c.attrInt("axis", 0), s.size());
  Ints parts = c.attrInts("split");
  if (c.cx.opset >= 13 && c.has(1)) parts = c.intsInput(1, "Split's split");
  int outputs = std::ssize(c.n.outputs);
  if (parts.empty()) {
    int64_t n = s[static_cast<size_t>(axis)];
    int64_t count = c.attr("num_outputs") ? c.attrInt("num_outputs", outputs) : outputs;
    if (count <= 0) throw Error("Split needs at least one output");
    int64_t each = (n + count - 1) / count;
    for (int64_t start = 0; start < n; start += each) parts.push_back(std::min(each, n - start));
  }
  OnnxOutputs out;
  int64_t start = 0;
  for (int64_t p : parts) {
    if (p < 0 || p > s[static_cast<size_t>(axis)] - start) throw Error("split sizes must be >= 0 and add up to the axis size");
    out.push_back(c.emit("slice", {x}, {{"dim", axis}, {"start", start}, {"end", start + p}, {"step", int64_t{1}}}));
    start += p;
  }
  return out;
}

// Repeats via expand: [d0, d1] -> [1, d0, 1, d1] -> [r0, d0, r1, d1] -> [r0*d0, r1*d1].
OnnxOutputs tile(OnnxNode& c) {
  ValueId x = c.in(0);
  Ints s = c.sizes(x), reps = c.intsInput(1, "Tile's repeats");
  if (reps.size() != s.size()) throw Error("repeats must have one value per dim");
  for (size_t i = 0; i < s.size(); ++i) checkedNumel({reps[i], s[i]}, "a repeated dim");
  Ints interleaved, expanded, out;
  for (size_t i = 0; i < s.size(); ++i) {
    interleaved.insert(interleaved.end(), {1, s[i]});
    expanded.insert(expanded.end(), {reps[i], s[i]});
    out.push_back(reps[i] * s[i]);
  }
  return {c.reshape(c.emit("expand", {c.reshape(x, interleaved)}, {{"shape", shapeOf(expanded)}}), out)};
}

OnnxOutputs expand(OnnxNode& c) {  // bidirectional broadcast of x and the given shape
  ValueId x = c.in(0);
  Ints s = c.sizes(x), target = c.intsInput(1, "Expand's shape");
  size_t r = std::max(s.size(), target.size());
  Shape out(r, Dim(1));
  for (size_t i = 0; i < r; ++i) {
    int64_t a = i + s.size() >= r ? s[i + s.size() - r] : 1, b = i + target.size() >= r ? target[i + target.size() - r] : 1;
    if (a != b && a != 1 && b != 1) throw Error("cannot broadcast " + std::to_string(a) + " with " + std::to_string(b));
    out[i] = Dim(std::max(a, b));
  }
  return {out == c.shape(x) ? x : c.emit("expand", {x}, {{"shape", out}})};
}

OnnxOutputs pad(OnnxNode& c) {
  ValueId x = c.in(0);
  size_t r = c.rank(x);
  std::string mode = c.attrString("mode", "constant");
  Ints pads = c.cx.opset >= 11 ? c.intsInput(1, "Pad's pads") : c.attrInts("pads");
  double value = c.cx.opset >= 11 ? (c.has(2) ? c.cx.constant(c.n.inputs[2], "Pad's constant_value").data.at(0) : 0.0) : c.attrFloat("value", 0);
  Ints axes;
  if (c.has(3)) {
    for (int64_t a : c.intsInput(3, "Pad's axes")) axes.push_back(c.axis(a, r));
  } else {
    for (size_t i = 0; i < r; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (pads.size() != 2 * axes.size()) throw Error("pads must have two values per padded axis");
  for (size_t i = 0; i < axes.size(); ++i) {
    size_t d = static_cast<size_t>(axes[i]);
    int64_t lo = pads[i], hi = pads[i + axes.size()];
    if (mode == "constant") {
      x = c.padDim(x, d, lo, hi, value);
      continue;
    }
    if (mode != "reflect" && mode != "edge") throw OnnxUnsupported("Pad mode '" + mode + "' is not supported");
    if (lo < 0 || hi < 0) throw OnnxUnsupported("negative pads with mode '" + mode + "' are not supported");
    int64_t n = c.sizes(x)[d];
    const int64_t dd = static_cast<int64_t>(d);
    auto at = [&](int64_t i) { return c.emit("slice", {x}, {{"dim", dd}, {"start", i}, {"end", i + 1}, {"step", int64_t{1}}}); };
    std::vector<ValueId> parts;
    for (int64_t k = lo; k >= 1; --k) parts.push_back(mode == "edge" ? at(0) : at(std::min(k, n - 1)));
    parts.push_back(x);
    for (int64_t k = 1; k <= hi; ++k) parts.push_back(mode == "edge" ? at(n - 1) : at(std::max<int64_t>(n - 1 - k, 0)));
    if (parts.size() > 1) x = c.emit("cat", parts, {{"dim", dd}});
  }
  return {x};
}

// Keeps x where col - row >= k (upper) or <= k (lower); k may be a run-time input.
OnnxOutputs trilu(OnnxNode& c) {
  ValueId x = c.in(0);
  Ints s = c.sizes(x);
  if (s.size() < 2) throw Error("Trilu needs at least 2 dims");
  bool upper = c.attrInt("upper", 1) != 0;
  int64_t rows = s[s.size() - 2], cols = s.back();
  OnnxContext::checkBuildable({rows, cols}, "a triangular mask");
  Tensor diagonal(DType::I64, {rows, cols});  // col - row
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) diagonal.data[static_cast<size_t>(i * cols + j)] = static_cast<double>(j - i);
  ValueId k = c.has(1) ? c.cast(c.reshape(c.in(1), {}), DType::I64) : c.scalar(0, DType::I64);
  ValueId keep = c.emit(upper ? "ge" : "le", {c.cx.constantValue(diagonal), k});
  return {c.emit("where", {keep, x, c.scalar(0, c.dtype(x))})};
}

// DepthToSpace (DCR or CRD) and SpaceToDepth as reshape -> permute -> reshape.
OnnxOutputs depthToSpace(OnnxNode& c) {
  ValueId x = c.in(0);
  Ints s = c.sizes(x);
  if (s.size() != 4) throw Error("DepthToSpace needs N, C, H, W");
  int64_t b = c.attrInt("blocksize", 1), n = s[0], ch = s[1], h = s[2], w = s[3];
  if (b <= 0 || b > 65536 || ch % (b * b)) throw Error("blocksize must be positive and its square must divide the channels");
  int64_t oc = ch / (b * b);
  bool crd = c.attrString("mode", "DCR") == "CRD";
  ValueId y = crd ? c.reshape(x, {n, oc, b, b, h, w}) : c.reshape(x, {n, b, b, oc, h, w});
  y = permute(c, y, crd ? Ints{0, 1, 4, 2, 5, 3} : Ints{0, 3, 4, 1, 5, 2});
  return {c.reshape(y, {n, oc, h * b, w * b})};
}

OnnxOutputs spaceToDepth(OnnxNode& c) {
  ValueId x = c.in(0);
  Ints s = c.sizes(x);
  if (s.size() != 4) throw Error("SpaceToDepth needs N, C, H, W");
  int64_t b = c.attrInt("blocksize", 1), n = s[0], ch = s[1], h = s[2], w = s[3];
  if (b <= 0 || h % b || w % b) throw Error("blocksize must be positive and divide height and width");
  ValueId y = permute(c, c.reshape(x, {n, ch, h / b, b, w / b, b}), {0, 3, 5, 1, 2, 4});
  return {c.reshape(y, {n, ch * b * b, h / b, w / b})};
}

OnnxOutputs oneHot(OnnxNode& c) {
  ValueId idx = c.in(0);
  int64_t depth = static_cast<int64_t>(c.constantInput(1, "OneHot's depth").data.at(0));
  ValueId values = c.in(2);
  Ints is = c.sizes(idx);
  size_t r = is.size() + 1;
  size_t axis = static_cast<size_t>(c.axis(c.attrInt("axis", -1), r));
  Ints iu = is;
  iu.insert(iu.begin() + static_cast<std::ptrdiff_t>(axis), 1);
  DType it = isInteger(c.dtype(idx)) ? c.dtype(idx) : DType::I64;
  ValueId wrapped = wrapIndices(c, c.cast(idx, it), depth);
  ValueId hit = c.emit("eq", {c.reshape(wrapped, iu), c.iota(depth, axis, r, it)});
  ValueId off = c.emit("slice", {values}, {{"dim", int64_t{0}}, {"start", int64_t{0}}, {"end", int64_t{1}}, {"step", int64_t{1}}});
  ValueId on = c.emit("slice", {values}, {{"dim", int64_t{0}}, {"start", int64_t{1}}, {"end", int64_t{2}}, {"step", int64_t{1}}});
  return {c.emit("where", {hit, c.reshape(on, {}), c.reshape(off, {})})};
}

// A running sum along axis as a masked sum over a triangular 0/1 table (exclusive and reverse
// choose the triangle): out[.., j] = sum over i of x[.., i] where tri[i][j]. Exact for integers,
// and a pointwise + reduction pair the scheduler fuses (the matmul extern is f32 only).
OnnxOutputs cumSum(OnnxNode& c) {
  ValueId x = c.in(0);
  Ints s = c.sizes(x);
  int64_t axis = c.axis(c.intsInput(1, "CumSum's axis").at(0), s.size());
  bool exclusive = c.attrInt("exclusive", 0), reverse = c.attrInt("reverse", 0);
  int64_t n = s[static_cast<size_t>(axis)], last = static_cast<int64_t>(s.size()) - 1;
  OnnxContext::checkBuildable({n, n}, "a running-sum table");
  Tensor tri(DType::Bool, {n, n});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      tri.data[static_cast<size_t>(i * n + j)] = reverse ? (exclusive ? i > j : i >= j) : (exclusive ? i < j : i <= j);
  ValueId moved = axis == last ? x : c.emit("transpose", {x}, {{"dim0", axis}, {"dim1", last}});
  Ints column = c.sizes(moved);
  column.push_back(1);  // [.., n, 1]
  ValueId terms = c.emit("where", {c.cx.constantValue(tri), c.reshape(moved, column), c.scalar(0, c.dtype(x))});
  ValueId y = c.emit("sum", {terms}, {{"dim", Ints{-2}}, {"keepdim", false}});
  if (axis != last) y = c.emit("transpose", {y}, {{"dim0", axis}, {"dim1", last}});
  return {y};
}

OnnxOutputs squeezeLike(OnnxNode& c, bool unsqueeze) {
  ValueId x = c.in(0);
  Ints s = c.sizes(x);
  Ints axes = c.cx.opset >= 13 && c.has(1) ? c.intsInput(1, "axes") : c.attrInts("axes");
  Ints out;
  if (unsqueeze) {
    size_t rank = s.size() + axes.size();
    std::vector<bool> inserted(rank, false);
    for (int64_t a : axes) inserted[static_cast<size_t>(c.axis(a, rank))] = true;
    for (size_t i = 0, j = 0; i < rank; ++i) out.push_back(inserted[i] ? 1 : s[j++]);
  } else {
    std::vector<bool> removed(s.size(), axes.empty());
    for (int64_t a : axes) removed[static_cast<size_t>(c.axis(a, s.size()))] = true;
    for (size_t i = 0; i < s.size(); ++i)
      if (!(removed[i] && s[i] == 1)) out.push_back(s[i]);
  }
  return {c.reshape(x, out)};
}

}  // namespace

void addTensorImporters(OnnxImporters& m) {
  m["Identity"] = [](OnnxNode& c) -> OnnxOutputs { return {c.in(0)}; };
  m["Dropout"] = [](OnnxNode& c) -> OnnxOutputs {  // inference (or a ratio of 0): identity, and a mask of all true
    bool training = c.has(2) && c.cx.constant(c.n.inputs[2], "training_mode").data.at(0) != 0;
    if (training && !(c.has(1) && c.cx.constant(c.n.inputs[1], "Dropout's ratio").data.at(0) == 0))
      throw OnnxUnsupported("Dropout with training_mode=true is not supported (its mask is random)");
    if (c.attrInt("is_test", 1) == 0 && c.cx.opset < 7) throw OnnxUnsupported("Dropout with is_test=0 is not supported");
    ValueId x = c.in(0);
    OnnxOutputs out{x};
    if (std::ssize(c.n.outputs) > 1) {
      Shape s = c.shape(x);
      out.push_back(c.emit("full", {}, {{"shape", s}, {"value", 1.0}, {"dtype", std::string("bool")}}));
    }
    return out;
  };
  m["Flatten"] = [](OnnxNode& c) -> OnnxOutputs {
    ValueId x = c.in(0);
    Ints s = c.sizes(x);
    int64_t axis = c.attrInt("axis", 1);
    if (axis < 0) axis += static_cast<int64_t>(s.size());
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < static_cast<int64_t>(s.size()); ++i) (i < axis ? outer : inner) *= s[static_cast<size_t>(i)];
    return {c.reshape(x, {outer, inner})};
  };
  m["Reshape"] = [](OnnxNode& c) -> OnnxOutputs {
    ValueId x = c.in(0);
    Ints s = c.sizes(x);
    Ints target = c.cx.opset >= 5 ? c.intsInput(1, "the shape input") : c.attrInts("shape");
    bool allowZero = c.attrInt("allowzero", 0) != 0;
    int64_t inferred = -1;
    for (size_t i = 0; i < target.size(); ++i) {
      if (target[i] == 0 && !allowZero) {
        if (i >= s.size()) throw Error("shape entry 0 copies a dim the input does not have");
        target[i] = s[i];
      }
      if (target[i] == -1) {
        if (inferred >= 0) throw Error("more than one -1 in the shape");
        inferred = static_cast<int64_t>(i);
      }
    }
    if (inferred >= 0) {
      Ints rest = target;
      rest.erase(rest.begin() + inferred);
      int64_t known = checkedNumel(rest, "the shape input");
      target[static_cast<size_t>(inferred)] = known ? numelOf(s) / known : 0;
    }
    return {c.reshape(x, target)};
  };
  m["Transpose"] = [](OnnxNode& c) -> OnnxOutputs {
    ValueId x = c.in(0);
    Ints perm = c.attrInts("perm");
    if (perm.empty())
      for (size_t i = c.rank(x); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
    return {permute(c, x, perm)};
  };
  m["Concat"] = [](OnnxNode& c) -> OnnxOutputs {
    std::vector<ValueId> ins;
    for (int i = 0; i < std::ssize(c.n.inputs); ++i)
      if (c.has(i) && numelOf(c.sizes(c.in(i))) > 0) ins.push_back(c.in(i));  // empty inputs add nothing
    if (ins.empty()) ins.push_back(c.in(0));
    int64_t axis = c.axis(c.attrInt("axis", 0), c.rank(ins[0]));
    return {ins.size() == 1 ? ins[0] : c.emit("cat", ins, {{"dim", axis}})};
  };
  m["Unsqueeze"] = [](OnnxNode& c) { return squeezeLike(c, true); };
  m["Squeeze"] = [](OnnxNode& c) { return squeezeLike(c, false); };
  m["Cast"] = [](OnnxNode& c) -> OnnxOutputs { return {c.cast(c.in(0), castTarget(c))}; };
  m["CastLike"] = [](OnnxNode& c) -> OnnxOutputs { return {c.cast(c.in(0), c.dtype(c.in(1)))}; };
  m["Slice"] = slice;
  m["Gather"] = gather;
  m["GatherElements"] = gatherElements;
  m["Split"] = split;
  m["Tile"] = tile;
  m["Expand"] = expand;
  m["Pad"] = pad;
  m["Trilu"] = trilu;
  m["DepthToSpace"] = depthToSpace;
  m["SpaceToDepth"] = spaceToDepth;
  m["OneHot"] = oneHot;
  m["CumSum"] = cumSum;
}

}  // namespace fusebox

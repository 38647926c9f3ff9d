#include "core/ops/shape_rules.h"

#include <algorithm>

#include "core/ir/checked_math.h"

namespace fusebox {

void shapeFail(const std::string& op, const std::string& message) { throw ShapeError(op + ": " + message); }

Shape broadcastShapes(const Shape& a, const Shape& b, const std::string& op) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    Dim da = i < rank - a.size() ? Dim(1) : a[i - (rank - a.size())];
    Dim db = i < rank - b.size() ? Dim(1) : b[i - (rank - b.size())];
    if (da == db || db == Dim(1)) out[i] = da;
    else if (da == Dim(1)) out[i] = db;
    else
      shapeFail(op, "shapes " + shapeStr(a) + " and " + shapeStr(b) + " do not broadcast (dimension " +
                        std::to_string(i) + ": " + da.str() + " vs " + db.str() + ")");
  }
  return out;
}

int64_t normalizeAxis(int64_t axis, size_t rank, const std::string& op) {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= std::max<int64_t>(r, 1))
    shapeFail(op, "dimension " + std::to_string(axis) + " is out of range for a tensor of rank " +
                      std::to_string(rank));
  return axis < 0 ? axis + r : axis;
}

std::vector<int64_t> reductionAxes(const std::vector<int64_t>& dims, size_t rank, const std::string& op) {
  std::vector<int64_t> axes;
  if (dims.empty()) {
    for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
    return axes;
  }
  for (int64_t d : dims) axes.push_back(normalizeAxis(d, rank, op));
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) shapeFail(op, "a dimension is repeated");
  return axes;
}

Shape resolveReshape(const Shape& input, const Shape& target, const std::string& op) {
  Shape out = target;
  int inferred = -1;
  Dim known(1);
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == Dim(-1)) {
      if (inferred >= 0) shapeFail(op, "only one dimension can be -1 in " + shapeStr(target));
      inferred = static_cast<int>(i);
    } else if (out[i].isConstant() && out[i].value() < 0) {
      shapeFail(op, "negative size in " + shapeStr(target));
    } else {
      known = known * out[i];
    }
  }
  Dim total = numel(input);
  if (inferred >= 0) {
    auto q = total.dividedBy(known);
    if (!q) shapeFail(op, "cannot reshape " + shapeStr(input) + " into " + shapeStr(target));
    out[inferred] = *q;
  } else if (known != total) {
    shapeFail(op, "cannot reshape " + shapeStr(input) + " (" + total.str() + " elements) into " +
                      shapeStr(target) + " (" + known.str() + " elements)");
  }
  return out;
}

int64_t windowOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation,
                         const std::string& op) {
  if (stride <= 0 || kernel <= 0 || dilation <= 0 || pad < 0) shapeFail(op, "kernel, stride and dilation must be positive");
  // in + 2*pad - dilation*(kernel-1) - 1, checked: the attributes come from the model
  auto span = checkedMul(dilation, kernel - 1);
  auto padded = checkedMul(pad, 2);
  auto reach = padded ? checkedAdd(in, *padded) : std::nullopt;
  if (!span || !reach)
    shapeFail(op, "window of kernel " + std::to_string(kernel) + ", padding " + std::to_string(pad) + " and dilation " +
                      std::to_string(dilation) + " overflows int64");
  int64_t out = (*reach - *span - 1) / stride + 1;
  if (out <= 0)
    shapeFail(op, "input size " + std::to_string(in) + " is too small for kernel " + std::to_string(kernel));
  return out;
}

}  // namespace fusebox

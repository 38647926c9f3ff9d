// Shape helpers shared by the inference rules (and by the interpreter, which must agree).
#pragma once

#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace fusebox {

// Numpy/torch broadcasting of two shapes; throws ShapeError mentioning `op`.
Shape broadcastShapes(const Shape& a, const Shape& b, const std::string& op);
// Wraps a possibly negative axis into [0, rank); throws ShapeError when out of range.
int64_t normalizeAxis(int64_t axis, size_t rank, const std::string& op);
// Axes of a reduction: empty list means all axes; sorted and unique.
std::vector<int64_t> reductionAxes(const std::vector<int64_t>& dims, size_t rank, const std::string& op);
// Resolves a reshape target with at most one -1 against the input's element count.
Shape resolveReshape(const Shape& input, const Shape& target, const std::string& op);
// Output spatial size of conv/pool windows; throws when it is not positive.
int64_t windowOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation,
                         const std::string& op);

[[noreturn]] void shapeFail(const std::string& op, const std::string& message);

}  // namespace fusebox

namespace fusebox {
// Shape after reducing `axes` (normalized, sorted), keeping them as size 1 when keepdim.
Shape reducedShape(const Shape& in, const std::vector<int64_t>& axes, bool keepdim);
}  // namespace fusebox

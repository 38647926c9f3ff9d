#include "core/autograd/derivatives.h"

#include <set>

#include "core/autograd/derivative_rules.h"
#include "core/ops/binary_math.h"
#include "core/ops/shape_rules.h"

namespace fusebox {

using Ints = std::vector<int64_t>;

ValueId GradContext::size(const Dim& d) {
  if (d.isConstant()) return scalar(static_cast<double>(d.value()));
  return op("sym_size", {}, {{"size", d}, {"dtype", std::string(dtypeName(type(grad_).dtype))}});
}

ValueId GradContext::sumTo(ValueId g, const Shape& target) {
  const Shape from = shape(g);
  if (from == target) return g;
  size_t lead = from.size() - target.size();
  Ints axes;
  for (size_t i = 0; i < from.size(); ++i)
    if (i < lead || (target[i - lead] == Dim(1) && from[i] != Dim(1))) axes.push_back(static_cast<int64_t>(i));
  ValueId s = axes.empty() ? g : op("sum", {g}, {{"dim", axes}, {"keepdim", true}});
  return shape(s) == target ? s : op("reshape", {s}, {{"shape", target}});
}

ValueId GradContext::expandReduced(ValueId g, const Shape& full, const std::vector<int64_t>& axes) {
  Shape keep = full;
  for (int64_t a : axes) keep[a] = Dim(1);
  ValueId k = shape(g) == keep ? g : op("reshape", {g}, {{"shape", keep}});
  return keep == full ? k : op("expand", {k}, {{"shape", full}});
}

std::vector<int64_t> reductionAxesOf(GradContext& c, ValueId x) {
  return reductionAxes(attrsOf(c).ints("dim"), c.shape(x).size(), c.node().op);
}

namespace {

DerivativeTable buildTable() {
  DerivativeTable t;
  addUnaryDerivatives(t);
  addBinaryDerivatives(t);
  addReductionDerivatives(t);
  addMatmulDerivatives(t);
  addNormDerivatives(t);
  addNnDerivatives(t);
  addShapeDerivatives(t);
  return t;
}

// Comparisons (every Bool row of the binary table) and the constant makers.
std::set<std::string> nonDifferentiable() {
  std::set<std::string> ops = {"full", "arange", "sym_size"};
  for (const BinaryMath& b : binaryMathOps())
    if (b.torchOp && b.result == BinaryMath::Result::Bool) ops.insert(b.name);
  return ops;
}

}  // namespace

const DerivativeFn* findDerivative(const std::string& op) {
  static const DerivativeTable table = buildTable();
  auto it = table.find(op);
  return it == table.end() ? nullptr : &it->second;
}

bool isDifferentiable(const std::string& op) {
  static const std::set<std::string> none = nonDifferentiable();
  return !none.count(op);
}

}  // namespace fusebox

// Derivative formulas (the backward of every differentiable torch-level op, expressed as graph
// ops, like PyTorch's derivatives.yaml). Each formula maps the gradient of the node's output to
// gradients of the inputs that need one.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/ops/graph_builder.h"

namespace fusebox {

// What a derivative formula sees: the forward node, the incoming gradient, which inputs need a
// gradient, and helpers that emit ops through the builder (stamped with the node's origin).
class GradContext {
public:
  GradContext(GraphBuilder& b, const Node& node, ValueId grad, std::vector<bool> needs)
      : b_(b), node_(node), grad_(grad), needs_(std::move(needs)) {}

  const Node& node() const { return node_; }
  ValueId in(size_t i) const { return node_.inputs.at(i); }
  ValueId out() const { return node_.outputs.at(0); }
  ValueId grad() const { return grad_; }
  bool needs(size_t i) const { return i < needs_.size() && needs_[i]; }
  size_t numInputs() const { return node_.inputs.size(); }
  // By value: emitting nodes grows the graph's value table, so references would dangle.
  TensorType type(ValueId v) const { return b_.type(v); }
  Shape shape(ValueId v) const { return b_.type(v).shape; }
  const AttrMap& attrs() const { return node_.attrs; }

  ValueId op(const std::string& name, const std::vector<ValueId>& inputs, AttrMap attrs = {}) {
    return b_.emit(name, inputs, std::move(attrs));
  }
  ValueId scalar(double v) { return b_.scalar(v, type(grad_).dtype); }
  // A scalar holding a size (a constant when concrete, sym_size when symbolic).
  ValueId size(const Dim& d);
  ValueId add(ValueId a, ValueId b) { return op("add", {a, b}); }
  ValueId sub(ValueId a, ValueId b) { return op("sub", {a, b}); }
  ValueId mul(ValueId a, ValueId b) { return op("mul", {a, b}); }
  ValueId div(ValueId a, ValueId b) { return op("div", {a, b}); }
  ValueId neg(ValueId a) { return op("neg", {a}); }
  // Sums a broadcast gradient back to `shape` (the inverse of broadcasting).
  ValueId sumTo(ValueId g, const Shape& shape);
  // Reshapes a reduced gradient to keepdim form and expands it over `shape`.
  ValueId expandReduced(ValueId g, const Shape& shape, const std::vector<int64_t>& axes);

private:
  GraphBuilder& b_;
  const Node& node_;
  ValueId grad_;
  std::vector<bool> needs_;
};

using DerivativeFn = std::function<std::vector<std::optional<ValueId>>(GradContext&)>;

// nullptr when the op has no derivative: either non-differentiable (isDifferentiable false) or
// a backward op itself (second-order gradients are not supported).
const DerivativeFn* findDerivative(const std::string& op);
// Comparisons, creation ops and integer outputs carry no gradient.
bool isDifferentiable(const std::string& op);

}  // namespace fusebox

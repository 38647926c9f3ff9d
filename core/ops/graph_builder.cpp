#include "core/ops/graph_builder.h"

#include "core/ops/registry.h"

namespace fusebox {

void GraphBuilder::setOrigin(std::string scope, std::vector<NodeId> provenance, SourceLoc loc) {
  scope_ = std::move(scope);
  provenance_ = std::move(provenance);
  loc_ = std::move(loc);
  recomputed_ = false;
}

ValueId GraphBuilder::emit(const std::string& op, const std::vector<ValueId>& inputs, AttrMap attrs) {
  std::vector<TensorType> types;
  types.reserve(inputs.size());
  for (ValueId v : inputs) types.push_back(g_.type(v));
  std::vector<TensorType> outs;
  try {
    outs = inferTypes(op, types, attrs);
  } catch (const ShapeError& err) {
    throw ShapeError(err.message(), loc_.valid() ? loc_ : err.loc());
  }
  // Every value's element count must be an int64 (later stages and the allocators rely on it).
  for (const TensorType& t : outs) {
    try {
      (void)numel(t.shape);
    } catch (const ShapeError&) {
      throw ShapeError(op + ": the result " + t.str() + " has more elements than int64 can count (or, beside a zero dim, dims whose product does not fit)", loc_);
    }
  }
  NodeId n = g_.addNode(op, inputs, std::move(attrs), outs, scope_, loc_, provenance_);
  if (recomputed_) g_.markRecomputed(n);
  return g_.node(n).outputs.at(0);
}

ValueId GraphBuilder::scalar(double value, DType dtype) {
  return emit(scalarOp_, {}, AttrMap{{"value", value}, {"dtype", std::string(dtypeName(dtype))}});
}

}  // namespace fusebox

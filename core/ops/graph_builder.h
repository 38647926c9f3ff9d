// Appends type-checked nodes to a graph. Every stage that creates nodes (trace, autograd,
// decompose) goes through this, so inference, naming of the origin (scope, provenance,
// source location) and error locations are handled in one place.
#pragma once

#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace fusebox {

class GraphBuilder {
public:
  explicit GraphBuilder(Graph& g) : g_(g) {}

  // Stamped onto every node emitted until the next call. Empty provenance: the node's own id.
  void setOrigin(std::string scope, std::vector<NodeId> provenance = {}, SourceLoc loc = {});
  // Copies scope, provenance and location from an existing node.
  void setOrigin(const Node& from) {
    setOrigin(from.scope, from.provenance, from.loc);
    recomputed_ = from.recomputed;
  }

  // Infers the output type (throwing ShapeError at the origin's location) and appends the node.
  ValueId emit(const std::string& op, const std::vector<ValueId>& inputs, AttrMap attrs = {});
  // A scalar constant (a 0-d `full`, or `prims.full` when building prim graphs).
  ValueId scalar(double value, DType dtype);
  void setScalarOp(std::string op) { scalarOp_ = std::move(op); }

  // A reference into the graph: emitting further nodes may invalidate it.
  const TensorType& type(ValueId v) const { return g_.type(v); }
  Graph& graph() { return g_; }

private:
  Graph& g_;
  std::string scope_;
  std::vector<NodeId> provenance_;
  SourceLoc loc_;
  bool recomputed_ = false;
  std::string scalarOp_ = "full";
};

}  // namespace fusebox

// The torch-level op registry: lookup, attribute normalization and type inference.
#pragma once

#include <string_view>
#include <vector>

#include "core/ir/verifier.h"
#include "core/ops/op_schema.h"

namespace fusebox {

class OpRegistry {
public:
  static const OpRegistry& instance();

  const OpSchema* find(std::string_view name) const;
  const std::vector<OpSchema>& all() const { return ops_; }  // torch-level ops and prims
  std::vector<const OpSchema*> torchOps() const;
  std::vector<const OpSchema*> prims() const;

  void add(OpSchema schema);

private:
  OpRegistry();
  std::vector<OpSchema> ops_;
};

// Fills defaults, converts compatible kinds (int -> float, int list -> shape, int -> dim) and
// rejects unknown or missing attributes. Throws ShapeError naming the op and attribute.
AttrMap normalizeAttrs(const OpSchema& schema, const AttrMap& given);

// Checks arity, normalizes attributes and runs the op's inference rule. Throws ShapeError.
std::vector<TensorType> inferTypes(const std::string& op, const std::vector<TensorType>& inputs,
                                   AttrMap& attrs);

// Registration of each op family (one file each).
void registerElementwiseOps(OpRegistry& r);
void registerReductionOps(OpRegistry& r);
void registerNNOps(OpRegistry& r);
void registerShapeOps(OpRegistry& r);
void registerBackwardOps(OpRegistry& r);
void registerPrims(OpRegistry& r);

}  // namespace fusebox

namespace fusebox {
// Verifier hook for graphs of torch-level ops (stages 1-2).
OpTyper torchOpTyper();
// Verifier hook for decomposed graphs: every node must be a prim.
OpTyper primOpTyper();
// Fill color of a node in graph views, by its op's kind.
std::string opKindColor(const Node& node);
}  // namespace fusebox

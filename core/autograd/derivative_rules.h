// The derivative formulas' shared vocabulary, for the per-family files that register them
// (derivatives_elementwise.cpp, derivatives_reduction.cpp, derivatives_nn.cpp,
// derivatives_shape.cpp), as the registry's ops_*.cpp register schemas.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/autograd/derivatives.h"
#include "core/ops/op_schema.h"

namespace fusebox {

using Grads = std::vector<std::optional<ValueId>>;
using DerivativeTable = std::map<std::string, DerivativeFn>;

inline AttrReader attrsOf(GradContext& c) { return AttrReader{c.attrs()}; }
// The axes of a reduction's `dim` attribute over `x`, normalized.
std::vector<int64_t> reductionAxesOf(GradContext& c, ValueId x);

void addUnaryDerivatives(DerivativeTable& t);
void addBinaryDerivatives(DerivativeTable& t);
void addReductionDerivatives(DerivativeTable& t);
void addMatmulDerivatives(DerivativeTable& t);
void addNormDerivatives(DerivativeTable& t);
void addNnDerivatives(DerivativeTable& t);
void addShapeDerivatives(DerivativeTable& t);

}  // namespace fusebox

#include "core/ops/reduction_math.h"

#include <cmath>

namespace fusebox {

const std::vector<ReductionMath>& reductionMathOps() {
  static const std::vector<ReductionMath> ops = {
#define FB_REDUCTION(Enum, name, prim, identity, value, helper, cudaFunctor, exact) \
  {ReduceOp::Enum, name, prim, identity, [](double acc, double x) { return static_cast<double>(value); }, helper, cudaFunctor, exact},
#include "core/ops/reduction_math.def"
#undef FB_REDUCTION
  };
  return ops;
}

const ReductionMath& reductionMath(ReduceOp op) { return reductionMathOps()[static_cast<size_t>(op)]; }

const ReductionMath* findReductionByPrim(const std::string& prim) {
  for (const ReductionMath& r : reductionMathOps())
    if (r.prim == prim) return &r;
  return nullptr;
}

}  // namespace fusebox

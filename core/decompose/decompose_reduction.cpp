// Decompositions of the reductions (the reduction table's prims), mean and the softmaxes.
#include "core/decompose/decomposer.h"

#include "core/ops/reduction_math.h"

namespace fusebox {

void addReductionDecompositions(DecompTable& t) {
  for (const ReductionMath& r : reductionMathOps())
    t[r.prim] = [op = r.prim](Decomp& d) {
      auto axes = reductionAxes(d.a().ints("dim"), d.shape(d.in(0)).size(), op);
      return d.reduce(op, d.in(0), axes, d.a().b("keepdim"));
    };
  t["mean"] = [](Decomp& d) {
    return d.mean(d.in(0), reductionAxes(d.a().ints("dim"), d.shape(d.in(0)).size(), "mean"), d.a().b("keepdim"));
  };
  t["softmax"] = [](Decomp& d) {
    int64_t dim = normalizeAxis(d.a().i("dim"), d.shape(d.in(0)).size(), "softmax");
    ValueId shifted = d.binary("sub", d.in(0), d.reduce("amax", d.in(0), {dim}, true));
    ValueId e = d.unary("exp", shifted);
    return d.binary("div", e, d.reduce("sum", e, {dim}, true));
  };
  t["log_softmax"] = [](Decomp& d) {
    int64_t dim = normalizeAxis(d.a().i("dim"), d.shape(d.in(0)).size(), "log_softmax");
    auto [shifted, logSum] = d.shiftedAndLogSum(d.in(0), dim);
    return d.binary("sub", shifted, logSum);
  };

}

}  // namespace fusebox

// Derivatives of the reductions and softmaxes: the gradient expanded back over the reduced axes.
#include "core/autograd/derivative_rules.h"

#include "core/ops/shape_rules.h"

namespace fusebox {

namespace {

using Ints = std::vector<int64_t>;

Dim reducedCount(GradContext& c, ValueId x, const std::vector<int64_t>& axes) {
  Dim n(1);
  for (int64_t a : axes) n = n * c.shape(x)[a];
  return n;
}

}  // namespace

void addReductionDerivatives(DerivativeTable& t) {
  t["sum"] = [](GradContext& c) -> Grads {
    return {c.expandReduced(c.grad(), c.shape(c.in(0)), reductionAxesOf(c, c.in(0)))};
  };
  t["mean"] = [](GradContext& c) -> Grads {
    auto axes = reductionAxesOf(c, c.in(0));
    ValueId g = c.div(c.grad(), c.size(reducedCount(c, c.in(0), axes)));
    return {c.expandReduced(g, c.shape(c.in(0)), axes)};
  };
  for (const char* op : {"amax", "amin"}) {
    t[op] = [](GradContext& c) -> Grads {
      // Split evenly between all elements equal to the extremum.
      auto axes = reductionAxesOf(c, c.in(0));
      const Shape& xs = c.shape(c.in(0));
      ValueId hit = c.op("eq", {c.in(0), c.expandReduced(c.out(), xs, axes)});
      ValueId mask = c.op("to", {hit}, {{"dtype", std::string(dtypeName(c.type(c.in(0)).dtype))}});
      ValueId count = c.op("sum", {mask}, {{"dim", axes}, {"keepdim", true}});
      return {c.div(c.mul(c.expandReduced(c.grad(), xs, axes), mask), count)};
    };
  }
  t["softmax"] = [](GradContext& c) -> Grads {
    ValueId gy = c.mul(c.grad(), c.out());
    ValueId s = c.op("sum", {gy}, {{"dim", Ints{attrsOf(c).i("dim")}}, {"keepdim", true}});
    return {c.sub(gy, c.mul(c.out(), s))};
  };
  t["log_softmax"] = [](GradContext& c) -> Grads {
    ValueId s = c.op("sum", {c.grad()}, {{"dim", Ints{attrsOf(c).i("dim")}}, {"keepdim", true}});
    return {c.sub(c.grad(), c.mul(c.op("exp", {c.out()}), s))};
  };

}

}  // namespace fusebox

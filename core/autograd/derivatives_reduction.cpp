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
  t["prod"] = [](GradContext& c) -> Grads {
    // d prod / d x_i = the product of the others: out / x_i where x_i != 0; at the one zero of a
    // slice, the product of its nonzero elements; 0 where a slice has two zeros or more.
    auto axes = reductionAxesOf(c, c.in(0));
    const Shape& xs = c.shape(c.in(0));
    ValueId x = c.in(0), zero = c.scalar(0), one = c.scalar(1);
    ValueId isZero = c.op("eq", {x, zero});
    ValueId zeros = c.op("sum", {c.op("to", {isZero}, {{"dtype", std::string(dtypeName(c.type(x).dtype))}})}, {{"dim", axes}, {"keepdim", true}});
    ValueId nonzeroProd = c.op("prod", {c.op("where", {isZero, one, x})}, {{"dim", axes}, {"keepdim", true}});
    ValueId atZero = c.op("where", {c.op("eq", {zeros, one}), nonzeroProd, zero});
    ValueId others = c.op("where", {isZero, c.expandReduced(atZero, xs, axes), c.div(c.expandReduced(c.out(), xs, axes), c.op("where", {isZero, one, x}))});
    return {c.mul(c.expandReduced(c.grad(), xs, axes), others)};
  };
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

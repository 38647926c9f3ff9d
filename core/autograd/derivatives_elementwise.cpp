// Derivatives of the elementwise ops: unary math and activations, binary arithmetic, where, casts
// and dropout. A binary op's gradient is summed back over the dims it broadcast.
#include "core/autograd/derivative_rules.h"

#include <cmath>

namespace fusebox {

namespace {

// Formulas for unary ops written as f'(x, y) * g.
DerivativeFn unary(std::function<ValueId(GradContext&, ValueId x, ValueId y)> dydx) {
  return [dydx](GradContext& c) -> Grads { return {c.mul(c.grad(), dydx(c, c.in(0), c.out()))}; };
}

}  // namespace

void addUnaryDerivatives(DerivativeTable& t) {
  t["neg"] = [](GradContext& c) -> Grads { return {c.neg(c.grad())}; };
  t["abs"] = [](GradContext& c) -> Grads {
    ValueId zero = c.scalar(0);
    ValueId pos = c.op("gt", {c.in(0), zero}), negative = c.op("lt", {c.in(0), zero});
    return {c.op("where", {pos, c.grad(), c.op("where", {negative, c.neg(c.grad()), zero})})};
  };
  t["relu"] = [](GradContext& c) -> Grads {
    ValueId zero = c.scalar(0);
    return {c.op("where", {c.op("gt", {c.out(), zero}), c.grad(), zero})};
  };
  t["exp"] = unary([](GradContext&, ValueId, ValueId y) { return y; });
  t["log"] = [](GradContext& c) -> Grads { return {c.div(c.grad(), c.in(0))}; };
  t["tanh"] = unary([](GradContext& c, ValueId, ValueId y) { return c.sub(c.scalar(1), c.mul(y, y)); });
  t["sigmoid"] = unary([](GradContext& c, ValueId, ValueId y) { return c.mul(y, c.sub(c.scalar(1), y)); });
  t["silu"] = unary([](GradContext& c, ValueId x, ValueId) {
    ValueId s = c.op("sigmoid", {x});
    return c.mul(s, c.add(c.scalar(1), c.mul(x, c.sub(c.scalar(1), s))));
  });
  t["sqrt"] = [](GradContext& c) -> Grads { return {c.div(c.mul(c.grad(), c.scalar(0.5)), c.out())}; };
  t["rsqrt"] = unary([](GradContext& c, ValueId, ValueId y) { return c.mul(c.scalar(-0.5), c.mul(y, c.mul(y, y))); });
  t["erf"] = unary([](GradContext& c, ValueId x, ValueId) {
    return c.mul(c.scalar(2.0 / std::sqrt(M_PI)), c.op("exp", {c.neg(c.mul(x, x))}));
  });
  t["sin"] = unary([](GradContext& c, ValueId x, ValueId) { return c.op("cos", {x}); });
  t["cos"] = unary([](GradContext& c, ValueId x, ValueId) { return c.neg(c.op("sin", {x})); });
  t["atan"] = unary([](GradContext& c, ValueId x, ValueId) { return c.div(c.scalar(1), c.add(c.scalar(1), c.mul(x, x))); });
  // Step functions: zero almost everywhere (PyTorch's convention).
  for (const char* op : {"floor", "round"})
    t[op] = [](GradContext& c) -> Grads { return {c.mul(c.grad(), c.scalar(0))}; };
  t["gelu"] = unary([](GradContext& c, ValueId x, ValueId) {
    if (AttrReader{c.attrs()}.s("approximate") == "tanh") {
      const double k = std::sqrt(2.0 / M_PI), a = 0.044715;
      ValueId x2 = c.mul(x, x);
      ValueId inner = c.mul(c.scalar(k), c.add(x, c.mul(c.scalar(a), c.mul(x2, x))));
      ValueId th = c.op("tanh", {inner});
      ValueId left = c.mul(c.scalar(0.5), c.add(c.scalar(1), th));
      ValueId dinner = c.mul(c.scalar(k), c.add(c.scalar(1), c.mul(c.scalar(3 * a), x2)));
      ValueId right = c.mul(c.mul(c.scalar(0.5), x), c.mul(c.sub(c.scalar(1), c.mul(th, th)), dinner));
      return c.add(left, right);
    }
    ValueId cdf = c.mul(c.scalar(0.5), c.add(c.scalar(1), c.op("erf", {c.mul(x, c.scalar(M_SQRT1_2))})));
    ValueId pdf = c.mul(c.scalar(1.0 / std::sqrt(2 * M_PI)), c.op("exp", {c.mul(c.scalar(-0.5), c.mul(x, x))}));
    return c.add(cdf, c.mul(x, pdf));
  });

  t["where"] = [](GradContext& c) -> Grads {
    Grads g(3);
    ValueId zero = c.scalar(0);
    if (c.needs(1)) g[1] = c.sumTo(c.op("where", {c.in(0), c.grad(), zero}), c.shape(c.in(1)));
    if (c.needs(2)) g[2] = c.sumTo(c.op("where", {c.in(0), zero, c.grad()}), c.shape(c.in(2)));
    return g;
  };
  t["masked_fill"] = [](GradContext& c) -> Grads { return {c.op("where", {c.in(1), c.scalar(0), c.grad()}), std::nullopt}; };
  t["to"] = [](GradContext& c) -> Grads {
    return {c.op("to", {c.grad()}, {{"dtype", std::string(dtypeName(c.type(c.in(0)).dtype))}})};
  };
  // The same seeded mask applied to the gradient: d dropout(x) = dropout(g).
  t["dropout"] = [](GradContext& c) -> Grads { return {c.op("dropout", {c.grad()}, c.attrs())}; };

}

void addBinaryDerivatives(DerivativeTable& t) {
  t["add"] = [](GradContext& c) -> Grads {
    return {c.sumTo(c.grad(), c.shape(c.in(0))), c.sumTo(c.grad(), c.shape(c.in(1)))};
  };
  t["sub"] = [](GradContext& c) -> Grads {
    Grads g{c.sumTo(c.grad(), c.shape(c.in(0))), std::nullopt};
    if (c.needs(1)) g[1] = c.sumTo(c.neg(c.grad()), c.shape(c.in(1)));
    return g;
  };
  t["mul"] = [](GradContext& c) -> Grads {
    Grads g(2);
    if (c.needs(0)) g[0] = c.sumTo(c.mul(c.grad(), c.in(1)), c.shape(c.in(0)));
    if (c.needs(1)) g[1] = c.sumTo(c.mul(c.grad(), c.in(0)), c.shape(c.in(1)));
    return g;
  };
  t["div"] = [](GradContext& c) -> Grads {
    Grads g(2);
    if (c.needs(0)) g[0] = c.sumTo(c.div(c.grad(), c.in(1)), c.shape(c.in(0)));
    if (c.needs(1)) g[1] = c.sumTo(c.neg(c.div(c.mul(c.grad(), c.out()), c.in(1))), c.shape(c.in(1)));
    return g;
  };
  t["pow"] = [](GradContext& c) -> Grads {
    Grads g(2);
    if (c.needs(0)) {
      ValueId d = c.mul(c.in(1), c.op("pow", {c.in(0), c.sub(c.in(1), c.scalar(1))}));
      g[0] = c.sumTo(c.mul(c.grad(), d), c.shape(c.in(0)));
    }
    if (c.needs(1)) g[1] = c.sumTo(c.mul(c.grad(), c.mul(c.out(), c.op("log", {c.in(0)}))), c.shape(c.in(1)));
    return g;
  };
  t["atan2"] = [](GradContext& c) -> Grads {  // d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2)
    ValueId scaled = c.div(c.grad(), c.add(c.mul(c.in(0), c.in(0)), c.mul(c.in(1), c.in(1))));
    Grads g(2);
    if (c.needs(0)) g[0] = c.sumTo(c.mul(scaled, c.in(1)), c.shape(c.in(0)));
    if (c.needs(1)) g[1] = c.sumTo(c.neg(c.mul(scaled, c.in(0))), c.shape(c.in(1)));
    return g;
  };
  t["hypot"] = [](GradContext& c) -> Grads {  // d/da = a / hypot(a, b), d/db = b / hypot(a, b)
    ValueId scaled = c.div(c.grad(), c.out());
    Grads g(2);
    if (c.needs(0)) g[0] = c.sumTo(c.mul(scaled, c.in(0)), c.shape(c.in(0)));
    if (c.needs(1)) g[1] = c.sumTo(c.mul(scaled, c.in(1)), c.shape(c.in(1)));
    return g;
  };
  // maximum: a wins where a > b; minimum: where a < b.
  for (auto [op, winsOp] : {std::pair{"maximum", "gt"}, std::pair{"minimum", "lt"}}) {
    t[op] = [winsOp = std::string(winsOp)](GradContext& c) -> Grads {
      // Ties split the gradient evenly, as in torch.
      ValueId wins = c.op(winsOp, {c.in(0), c.in(1)});
      ValueId tie = c.op("eq", {c.in(0), c.in(1)});
      ValueId wa = c.op("where", {wins, c.scalar(1), c.op("where", {tie, c.scalar(0.5), c.scalar(0)})});
      Grads g(2);
      if (c.needs(0)) g[0] = c.sumTo(c.mul(c.grad(), wa), c.shape(c.in(0)));
      if (c.needs(1)) g[1] = c.sumTo(c.mul(c.grad(), c.sub(c.scalar(1), wa)), c.shape(c.in(1)));
      return g;
    };
  }
}

}  // namespace fusebox

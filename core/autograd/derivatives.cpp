#include "core/autograd/derivatives.h"

#include <cmath>
#include <map>
#include <set>

#include "core/ops/registry.h"
#include "core/ops/shape_rules.h"

namespace fusebox {

using Grads = std::vector<std::optional<ValueId>>;
using Ints = std::vector<int64_t>;

ValueId GradContext::size(const Dim& d) {
  if (d.isConstant()) return scalar(static_cast<double>(d.value()));
  return op("sym_size", {}, {{"size", d}, {"dtype", std::string(dtypeName(type(grad_).dtype))}});
}

ValueId GradContext::sumTo(ValueId g, const Shape& target) {
  const Shape from = shape(g);
  if (from == target) return g;
  size_t lead = from.size() - target.size();
  Ints axes;
  for (size_t i = 0; i < from.size(); ++i)
    if (i < lead || (target[i - lead] == Dim(1) && from[i] != Dim(1))) axes.push_back(static_cast<int64_t>(i));
  ValueId s = axes.empty() ? g : op("sum", {g}, {{"dim", axes}, {"keepdim", true}});
  return shape(s) == target ? s : op("reshape", {s}, {{"shape", target}});
}

ValueId GradContext::expandReduced(ValueId g, const Shape& full, const std::vector<int64_t>& axes) {
  Shape keep = full;
  for (int64_t a : axes) keep[a] = Dim(1);
  ValueId k = shape(g) == keep ? g : op("reshape", {g}, {{"shape", keep}});
  return keep == full ? k : op("expand", {k}, {{"shape", full}});
}

namespace {

AttrReader attrsOf(GradContext& c) { return AttrReader{c.attrs()}; }

// Formulas for unary ops written as f'(x, y) * g.
DerivativeFn unary(std::function<ValueId(GradContext&, ValueId x, ValueId y)> dydx) {
  return [dydx](GradContext& c) -> Grads { return {c.mul(c.grad(), dydx(c, c.in(0), c.out()))}; };
}

// Softmax-style and norm reductions need their axes as a list.
std::vector<int64_t> reductionAxesOf(GradContext& c, ValueId x) {
  return reductionAxes(attrsOf(c).ints("dim"), c.shape(x).size(), c.node().op);
}

Dim reducedCount(GradContext& c, ValueId x, const std::vector<int64_t>& axes) {
  Dim n(1);
  for (int64_t a : axes) n = n * c.shape(x)[a];
  return n;
}

// dx of a normalization over `axes`: rstd * (gw - mean(gw) - xhat * mean(gw * xhat)).
ValueId normInputGrad(GradContext& c, ValueId gw, ValueId xhat, ValueId rstd, const Ints& axes) {
  AttrMap keep{{"dim", axes}, {"keepdim", true}};
  ValueId m1 = c.op("mean", {gw}, keep);
  ValueId m2 = c.op("mean", {c.mul(gw, xhat)}, keep);
  return c.mul(rstd, c.sub(c.sub(gw, m1), c.mul(xhat, m2)));
}

struct NormStats {
  ValueId xhat, rstd;
};
NormStats normalize(GradContext& c, ValueId x, const Ints& axes, double eps) {
  AttrMap keep{{"dim", axes}, {"keepdim", true}};
  ValueId mean = c.op("mean", {x}, keep);
  ValueId xc = c.sub(x, mean);
  ValueId var = c.op("mean", {c.mul(xc, xc)}, keep);
  ValueId rstd = c.op("rsqrt", {c.add(var, c.scalar(eps))});
  return {c.mul(xc, rstd), rstd};
}

// [C] -> [1, C, 1, ...] for broadcasting over (N, C, spatial...).
ValueId channelView(GradContext& c, ValueId v, size_t rank) {
  Shape s(rank, Dim(1));
  s[1] = c.shape(v)[0];
  return c.op("reshape", {v}, {{"shape", s}});
}

Ints allButChannel(size_t rank) {
  Ints axes{0};
  for (size_t i = 2; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  return axes;
}

AttrMap pick(const AttrMap& from, std::initializer_list<const char*> keys) {
  AttrMap out;
  for (const char* k : keys) out[k] = from.at(k);
  return out;
}

std::map<std::string, DerivativeFn> buildTable() {
  std::map<std::string, DerivativeFn> t;
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
  for (const char* op : {"maximum", "minimum"}) {
    bool isMax = std::string(op) == "maximum";
    t[op] = [isMax](GradContext& c) -> Grads {
      // Ties split the gradient evenly, as in torch.
      ValueId wins = c.op(isMax ? "gt" : "lt", {c.in(0), c.in(1)});
      ValueId tie = c.op("eq", {c.in(0), c.in(1)});
      ValueId wa = c.op("where", {wins, c.scalar(1), c.op("where", {tie, c.scalar(0.5), c.scalar(0)})});
      Grads g(2);
      if (c.needs(0)) g[0] = c.sumTo(c.mul(c.grad(), wa), c.shape(c.in(0)));
      if (c.needs(1)) g[1] = c.sumTo(c.mul(c.grad(), c.sub(c.scalar(1), wa)), c.shape(c.in(1)));
      return g;
    };
  }
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

  t["linear"] = [](GradContext& c) -> Grads {
    const Shape& xs = c.shape(c.in(0));
    const Shape& ws = c.shape(c.in(1));
    Dim rows = *numel(xs).dividedBy(ws[1]);
    Grads g(c.numInputs());
    if (c.needs(0)) g[0] = c.op("matmul", {c.grad(), c.in(1)});
    ValueId g2 = c.op("reshape", {c.grad()}, {{"shape", Shape{rows, ws[0]}}});
    if (c.needs(1)) {
      ValueId x2 = c.op("reshape", {c.in(0)}, {{"shape", Shape{rows, ws[1]}}});
      g[1] = c.op("matmul", {c.op("transpose", {g2}, {{"dim0", int64_t{0}}, {"dim1", int64_t{1}}}), x2});
    }
    if (c.numInputs() == 3 && c.needs(2)) g[2] = c.op("sum", {g2}, {{"dim", Ints{0}}, {"keepdim", false}});
    return g;
  };
  t["matmul"] = [](GradContext& c) -> Grads {
    // 1-D operands become matrices; batch broadcasting is undone by sumTo.
    ValueId a = c.in(0), b = c.in(1);
    if (c.shape(a).size() == 1) a = c.op("reshape", {a}, {{"shape", Shape{Dim(1), c.shape(a)[0]}}});
    if (c.shape(b).size() == 1) b = c.op("reshape", {b}, {{"shape", Shape{c.shape(b)[0], Dim(1)}}});
    AttrMap none;
    Shape outShape = inferTypes("matmul", {c.type(a), c.type(b)}, none)[0].shape;
    ValueId g = c.shape(c.grad()) == outShape ? c.grad() : c.op("reshape", {c.grad()}, {{"shape", outShape}});
    AttrMap lastTwo{{"dim0", int64_t{-2}}, {"dim1", int64_t{-1}}};
    Grads out(2);
    auto back = [&](ValueId grad, ValueId operand, ValueId original) {
      ValueId s = c.sumTo(grad, c.shape(operand));
      return c.shape(s) == c.shape(original) ? s : c.op("reshape", {s}, {{"shape", c.shape(original)}});
    };
    if (c.needs(0)) out[0] = back(c.op("matmul", {g, c.op("transpose", {b}, lastTwo)}), a, c.in(0));
    if (c.needs(1)) out[1] = back(c.op("matmul", {c.op("transpose", {a}, lastTwo), g}), b, c.in(1));
    return out;
  };
  t["bmm"] = [](GradContext& c) -> Grads {
    AttrMap swap{{"dim0", int64_t{1}}, {"dim1", int64_t{2}}};
    Grads g(2);
    if (c.needs(0)) g[0] = c.op("bmm", {c.grad(), c.op("transpose", {c.in(1)}, swap)});
    if (c.needs(1)) g[1] = c.op("bmm", {c.op("transpose", {c.in(0)}, swap), c.grad()});
    return g;
  };
  t["layer_norm"] = [](GradContext& c) -> Grads {
    AttrReader a = attrsOf(c);
    size_t rank = c.shape(c.in(0)).size(), k = a.ints("normalized_shape").size();
    Ints axes;
    for (size_t i = rank - k; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
    NormStats st = normalize(c, c.in(0), axes, a.f("eps"));
    bool affine = c.numInputs() >= 2;
    Grads g(c.numInputs());
    if (c.needs(0)) g[0] = normInputGrad(c, affine ? c.mul(c.grad(), c.in(1)) : c.grad(), st.xhat, st.rstd, axes);
    if (affine && c.needs(1)) g[1] = c.sumTo(c.mul(c.grad(), st.xhat), c.shape(c.in(1)));
    if (c.numInputs() == 3 && c.needs(2)) g[2] = c.sumTo(c.grad(), c.shape(c.in(2)));
    return g;
  };
  t["batch_norm"] = [](GradContext& c) -> Grads {
    AttrReader a = attrsOf(c);
    size_t rank = c.shape(c.in(0)).size();
    Ints axes = allButChannel(rank);
    AttrMap sumC{{"dim", axes}, {"keepdim", false}};
    ValueId w = channelView(c, c.in(1), rank);
    Grads g(5);
    if (a.b("training")) {
      NormStats st = normalize(c, c.in(0), axes, a.f("eps"));
      if (c.needs(0)) g[0] = normInputGrad(c, c.mul(c.grad(), w), st.xhat, st.rstd, axes);
      if (c.needs(1)) g[1] = c.op("sum", {c.mul(c.grad(), st.xhat)}, sumC);
    } else {
      ValueId rstd = channelView(c, c.op("rsqrt", {c.add(c.in(4), c.scalar(a.f("eps")))}), rank);
      ValueId xc = c.sub(c.in(0), channelView(c, c.in(3), rank));
      ValueId gs = c.mul(c.grad(), c.mul(w, rstd));
      if (c.needs(0)) g[0] = gs;
      if (c.needs(1)) g[1] = c.op("sum", {c.mul(c.grad(), c.mul(xc, rstd))}, sumC);
      if (c.needs(3)) g[3] = c.neg(c.op("sum", {gs}, sumC));
      if (c.needs(4)) {  // d/dvar of (x - m) * w * (var + eps)^-1/2 = -1/2 (x - m) w rstd^3
        ValueId r3 = c.mul(rstd, c.mul(rstd, rstd));
        g[4] = c.op("sum", {c.mul(c.mul(c.grad(), c.scalar(-0.5)), c.mul(xc, c.mul(w, r3)))}, sumC);
      }
    }
    if (c.needs(2)) g[2] = c.op("sum", {c.grad()}, sumC);
    return g;
  };
  t["conv2d"] = [](GradContext& c) -> Grads {
    AttrMap conv = pick(c.attrs(), {"stride", "padding", "dilation", "groups"});
    Grads g(c.numInputs());
    if (c.needs(0)) {
      AttrMap a = conv;
      a["input_shape"] = c.shape(c.in(0));
      g[0] = c.op("conv2d_backward_input", {c.grad(), c.in(1)}, a);
    }
    if (c.needs(1)) {
      AttrMap a = conv;
      a["weight_shape"] = concreteSizes(c.shape(c.in(1)));
      g[1] = c.op("conv2d_backward_weight", {c.in(0), c.grad()}, a);
    }
    if (c.numInputs() == 3 && c.needs(2)) g[2] = c.op("sum", {c.grad()}, {{"dim", Ints{0, 2, 3}}, {"keepdim", false}});
    return g;
  };
  t["max_pool2d"] = [](GradContext& c) -> Grads { return {c.op("max_pool2d_backward", {c.grad(), c.in(0)}, c.attrs())}; };
  t["avg_pool2d"] = [](GradContext& c) -> Grads {
    AttrMap a = c.attrs();
    a["input_shape"] = c.shape(c.in(0));
    return {c.op("avg_pool2d_backward", {c.grad()}, a)};
  };
  t["adaptive_avg_pool2d"] = [](GradContext& c) -> Grads {
    return {c.op("adaptive_avg_pool2d_backward", {c.grad()}, {{"input_shape", c.shape(c.in(0))}})};
  };
  t["embedding"] = [](GradContext& c) -> Grads {
    int64_t rows = concreteSizes(c.shape(c.in(1)))[0];
    return {std::nullopt, c.op("embedding_backward", {c.grad(), c.in(0)}, {{"num_weights", rows}})};
  };
  t["cross_entropy"] = [](GradContext& c) -> Grads {
    const Shape& ls = c.shape(c.in(0));
    std::string idx(dtypeName(c.type(c.in(1)).dtype)), fdt(dtypeName(c.type(c.in(0)).dtype));
    // softmax as exp(x - max - log(sum(exp(x - max)))): the row max and log-sum-exp are their own
    // reductions, so the partitioner can save them (tiny) and the backward reads the logits once.
    AttrMap rows{{"dim", Ints{1}}, {"keepdim", true}};
    ValueId shifted = c.sub(c.in(0), c.op("amax", {c.in(0)}, rows));
    ValueId logSum = c.op("log", {c.op("sum", {c.op("exp", {shifted})}, rows)});
    ValueId p = c.op("exp", {c.sub(shifted, logSum)});
    ValueId classes = c.op("reshape", {c.op("arange", {}, {{"end", ls[1]}, {"dtype", idx}})}, {{"shape", Shape{Dim(1), ls[1]}}});
    ValueId target = c.op("reshape", {c.in(1)}, {{"shape", Shape{ls[0], Dim(1)}}});
    ValueId onehot = c.op("to", {c.op("eq", {classes, target})}, {{"dtype", fdt}});
    return {c.mul(c.sub(p, onehot), c.div(c.grad(), c.size(ls[0]))), std::nullopt};
  };
  t["mse_loss"] = [](GradContext& c) -> Grads {
    ValueId scale = c.div(c.mul(c.grad(), c.scalar(2)), c.size(numel(c.shape(c.in(0)))));
    ValueId ga = c.mul(c.sub(c.in(0), c.in(1)), scale);
    return {ga, c.needs(1) ? std::optional<ValueId>(c.neg(ga)) : std::nullopt};
  };

  for (const char* op : {"reshape", "view"})
    t[op] = [](GradContext& c) -> Grads { return {c.op("reshape", {c.grad()}, {{"shape", c.shape(c.in(0))}})}; };
  t["permute"] = [](GradContext& c) -> Grads {
    const Ints& dims = attrsOf(c).ints("dims");
    Ints inverse(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) inverse[normalizeAxis(dims[i], dims.size(), "permute")] = static_cast<int64_t>(i);
    return {c.op("permute", {c.grad()}, {{"dims", inverse}})};
  };
  t["transpose"] = [](GradContext& c) -> Grads { return {c.op("transpose", {c.grad()}, c.attrs())}; };
  t["expand"] = [](GradContext& c) -> Grads { return {c.sumTo(c.grad(), c.shape(c.in(0)))}; };
  t["slice"] = [](GradContext& c) -> Grads {
    AttrReader a = attrsOf(c);
    const Shape& xs = c.shape(c.in(0));
    int64_t d = normalizeAxis(a.i("dim"), xs.size(), "slice");
    if (!xs[d].isConstant()) return {c.grad()};  // only the full slice of a symbolic dim type-checks
    int64_t n = xs[d].value(), start = a.i("start");
    start = std::clamp(start < 0 ? start + n : start, int64_t{0}, n);
    return {c.op("slice_backward", {c.grad()},
                 {{"input_shape", xs}, {"dim", d}, {"start", start}, {"step", a.i("step")}})};
  };
  t["cat"] = [](GradContext& c) -> Grads {
    int64_t d = normalizeAxis(attrsOf(c).i("dim"), c.shape(c.out()).size(), "cat");
    Grads g(c.numInputs());
    int64_t offset = 0;
    for (size_t i = 0; i < c.numInputs(); ++i) {
      const Dim len = c.shape(c.in(i))[d];
      if (!len.isConstant()) throw ShapeError("cat: gradient along symbolic dimension " + len.str() + " is not supported");
      if (c.needs(i))
        g[i] = c.op("slice", {c.grad()}, {{"dim", d}, {"start", offset}, {"end", offset + len.value()}, {"step", int64_t{1}}});
      offset += len.value();
    }
    return g;
  };
  return t;
}

const std::set<std::string> kNonDifferentiable = {"eq", "ne", "lt", "le", "gt", "ge", "full", "arange", "sym_size"};

}  // namespace

const DerivativeFn* findDerivative(const std::string& op) {
  static const std::map<std::string, DerivativeFn> table = buildTable();
  auto it = table.find(op);
  return it == table.end() ? nullptr : &it->second;
}

bool isDifferentiable(const std::string& op) { return !kNonDifferentiable.count(op); }

}  // namespace fusebox

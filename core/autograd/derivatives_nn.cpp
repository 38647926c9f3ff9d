// Derivatives of the neural-network ops: matmuls, normalizations, convolution, pooling,
// embedding and the losses. Convolution and pooling gradients are backward ops of their own.
#include "core/autograd/derivative_rules.h"

#include <cmath>

#include "core/ops/registry.h"
#include "core/ops/shape_rules.h"

namespace fusebox {

namespace {

using Ints = std::vector<int64_t>;

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

}  // namespace

void addMatmulDerivatives(DerivativeTable& t) {
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
    if (c.needs(1)) {
      const Shape& as = c.shape(a);
      const Shape& bs = c.shape(b);
      // A weight shared by every batch of a (b 2-D, a batched: ConvNeXt's MLP on [N, H, W, C],
      // a transformer's [B, T, C] linears): one GEMM over the flattened rows, a^T (rows x K)
      // times g (rows x N), not a matmul per batch and a sum over them.
      std::optional<Dim> rows = bs.size() == 2 && as.size() > 2 ? numel(as).dividedBy(bs[0]) : std::nullopt;
      ValueId lhs = rows ? c.op("reshape", {a}, {{"shape", Shape{*rows, bs[0]}}}) : a;
      ValueId rhs = rows ? c.op("reshape", {g}, {{"shape", Shape{*rows, bs[1]}}}) : g;
      out[1] = back(c.op("matmul", {c.op("transpose", {lhs}, lastTwo), rhs}), b, c.in(1));
    }
    return out;
  };
  t["bmm"] = [](GradContext& c) -> Grads {
    AttrMap swap{{"dim0", int64_t{1}}, {"dim1", int64_t{2}}};
    Grads g(2);
    if (c.needs(0)) g[0] = c.op("bmm", {c.grad(), c.op("transpose", {c.in(1)}, swap)});
    if (c.needs(1)) g[1] = c.op("bmm", {c.op("transpose", {c.in(0)}, swap), c.grad()});
    return g;
  };
}

void addNormDerivatives(DerivativeTable& t) {
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
}

void addNnDerivatives(DerivativeTable& t) {
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

}

}  // namespace fusebox

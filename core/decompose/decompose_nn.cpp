// Decompositions of the neural-network ops: matmuls (torch.matmul's broadcasting made
// explicit), normalizations, convolution and pooling (extern prims), embedding and the losses.
#include "core/decompose/decomposer.h"

#include <algorithm>

#include "core/ops/extern_prims.h"

namespace fusebox {

ValueId Decomp::matmul(ValueId x, ValueId y) {
  Shape xs = shape(x), ys = shape(y);
  bool xVec = xs.size() == 1, yVec = ys.size() == 1;
  if (xVec) x = reshape(x, Shape{Dim(1), xs[0]}), xs = shape(x);
  if (yVec) y = reshape(y, Shape{ys[0], Dim(1)}), ys = shape(y);
  Shape batch = broadcastShapes(Shape(xs.begin(), xs.end() - 2), Shape(ys.begin(), ys.end() - 2), "matmul");
  // A weight shared by every batch ([B, T, K] @ [K, N], a linear layer as ONNX MatMul): one GEMM
  // over the flattened rows, not a batched matmul that copies the weight per batch.
  bool sharedY = xs.size() > 2 && std::all_of(ys.begin(), ys.end() - 2, [](const Dim& d) { return d == Dim(1); });
  if (sharedY) {
    ValueId rows = reshape(x, Shape{numel(Shape(xs.begin(), xs.end() - 1)), xs.back()});
    ValueId r = matmulPrim(rows, ys.size() == 2 ? y : reshape(y, Shape{ys[ys.size() - 2], ys.back()}));
    return reshape(r, outType_.shape);
  }
  auto full = [&](ValueId v, const Shape& s) {
    Shape target = batch;
    target.push_back(s[s.size() - 2]);
    target.push_back(s.back());
    return bcast(v, target);
  };
  ValueId r = matmulPrim(full(x, xs), full(y, ys));
  return reshape(r, outType_.shape);
}

ValueId Decomp::matmulPrim(ValueId x, ValueId y) {
  if (dtype(x) == DType::F32) return p("matmul", {x, y});
  Shape xs = shape(x), ys = shape(y);
  size_t r = xs.size();
  Shape xu = xs, yu = ys, full = xs;
  xu.push_back(Dim(1));                                              // [.., M, K, 1]
  yu.insert(yu.end() - 2, Dim(1));                                   // [.., 1, K, N]
  full.push_back(ys.back());                                         // [.., M, K, N]
  ValueId prod = binary("mul", bcast(reshape(x, xu), full), bcast(reshape(y, yu), full));
  return reduce("sum", prod, {static_cast<int64_t>(r - 1)}, false);
}

void addMatmulDecompositions(DecompTable& t) {
  t["linear"] = [](Decomp& d) {
    const Shape& xs = d.shape(d.in(0));
    const Shape& ws = d.shape(d.in(1));
    Dim rows = *numel(xs).dividedBy(ws[1]);
    ValueId x2 = d.reshape(d.in(0), Shape{rows, ws[1]});
    ValueId y = d.matmulPrim(x2, d.p("permute", {d.in(1)}, {{"dims", Ints{1, 0}}}));
    if (d.numInputs() == 3) y = d.binary("add", y, d.in(2));
    return d.reshape(y, d.outType().shape);
  };
  t["matmul"] = [](Decomp& d) { return d.matmul(d.in(0), d.in(1)); };
  t["bmm"] = [](Decomp& d) { return d.matmulPrim(d.in(0), d.in(1)); };
}

void addNormDecompositions(DecompTable& t) {
  t["layer_norm"] = [](Decomp& d) {
    size_t rank = d.shape(d.in(0)).size(), k = d.a().ints("normalized_shape").size();
    Ints axes;
    for (size_t i = rank - k; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
    ValueId xc = d.binary("sub", d.in(0), d.mean(d.in(0), axes, true));
    ValueId var = d.mean(d.binary("mul", xc, xc), axes, true);
    ValueId y = d.binary("mul", xc, d.unary("rsqrt", d.withScalar("add", var, d.a().f("eps"))));
    if (d.numInputs() >= 2) y = d.binary("mul", y, d.in(1));
    if (d.numInputs() >= 3) y = d.binary("add", y, d.in(2));
    return y;
  };
  t["batch_norm"] = [](Decomp& d) {
    const Shape& xs = d.shape(d.in(0));
    auto channel = [&](ValueId v) {  // [C] -> [1, C, 1, ...]
      Shape s(xs.size(), Dim(1));
      s[1] = xs[1];
      return d.reshape(v, s);
    };
    ValueId mean, var;
    if (d.a().b("training")) {
      Ints axes{0};
      for (size_t i = 2; i < xs.size(); ++i) axes.push_back(static_cast<int64_t>(i));
      mean = d.mean(d.in(0), axes, true);
      ValueId xc = d.binary("sub", d.in(0), mean);
      var = d.mean(d.binary("mul", xc, xc), axes, true);
    } else {
      mean = channel(d.in(3));
      var = channel(d.in(4));
    }
    ValueId scale = d.binary("mul", d.unary("rsqrt", d.withScalar("add", var, d.a().f("eps"))), channel(d.in(1)));
    return d.binary("add", d.binary("mul", d.binary("sub", d.in(0), mean), scale), channel(d.in(2)));
  };
}

void addNnDecompositions(DecompTable& t) {
  t["conv2d"] = [](Decomp& d) {
    ValueId y = d.p("conv2d", {d.in(0), d.in(1)}, d.attrs());
    if (d.numInputs() == 3) {
      Shape s{Dim(1), d.shape(d.in(2))[0], Dim(1), Dim(1)};
      y = d.binary("add", y, d.reshape(d.in(2), s));
    }
    return y;
  };
  // Pooling and the convolution gradients are torch ops and extern prims of the same name.
  for (const ExternPrim& e : externPrims())
    if (e.pool != PoolWindow::None || e.kind == ExternKind::Conv2dInputGrad || e.kind == ExternKind::Conv2dWeightGrad)
      t[e.prim] = [name = e.prim](Decomp& d) {
        std::vector<ValueId> ins;
        for (size_t i = 0; i < d.numInputs(); ++i) ins.push_back(d.in(i));
        return d.p(name, ins, d.attrs());
      };
  t["embedding"] = [](Decomp& d) {
    ValueId flat = d.reshape(d.in(0), Shape{numel(d.shape(d.in(0)))});
    return d.reshape(d.p("index_select", {d.in(1), flat}, {{"dim", int64_t{0}}}), d.outType().shape);
  };
  t["embedding_backward"] = [](Decomp& d) {
    const Shape& gs = d.shape(d.in(0));
    Dim n = numel(d.shape(d.in(1)));
    ValueId zeros = d.p("full", {}, {{"shape", d.outType().shape}, {"value", 0.0}, {"dtype", std::string(dtypeName(d.dtype(d.in(0))))}});
    return d.p("index_add", {zeros, d.reshape(d.in(1), Shape{n}), d.reshape(d.in(0), Shape{n, gs.back()})}, {{"dim", int64_t{0}}});
  };
  t["cross_entropy"] = [](Decomp& d) {
    // log_softmax, gather the target column, mean of the negatives.
    const Shape& ls = d.shape(d.in(0));
    auto [shifted, logSum] = d.shiftedAndLogSum(d.in(0), 1);
    ValueId logp = d.binary("sub", shifted, logSum);
    ValueId picked = d.p("gather", {logp, d.reshape(d.in(1), Shape{ls[0], Dim(1)})}, {{"dim", int64_t{1}}});
    return d.unary("neg", d.mean(picked, {0, 1}, false));
  };
  t["mse_loss"] = [](Decomp& d) {
    ValueId diff = d.binary("sub", d.in(0), d.in(1));
    Ints all;
    for (size_t i = 0; i < d.shape(diff).size(); ++i) all.push_back(static_cast<int64_t>(i));
    ValueId sq = d.binary("mul", diff, diff);
    return all.empty() ? sq : d.mean(sq, all, false);
  };

}

}  // namespace fusebox

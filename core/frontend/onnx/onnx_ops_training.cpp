// ONNX's optimizer ops (domain ai.onnx.preview.training): Adagrad, Momentum and Adam update
// every (tensor, gradient, state) group of their inputs with the formulas of the ONNX operator
// spec. The learning rate R and the step count T are run-time inputs, so the bias corrections
// and T > 0 selections are ops of the graph, not folded.

#include "core/frontend/onnx/onnx_ops.h"
#include "core/ir/error.h"

namespace fusebox {

namespace {

// The optimizer's R, T and tensor groups: inputs 2 + k*n + i for group member k of tensor i.
struct OptimizerInputs {
  ValueId r, t;  // in the tensors' dtype
  size_t n = 0;
  ValueId member(OnnxNode& c, size_t k, size_t i) const { return c.in(static_cast<int>(2 + k * n + i)); }
};

OptimizerInputs optimizerInputs(OnnxNode& c, size_t groups) {
  if (std::ssize(c.n.inputs) < 2 || (std::ssize(c.n.inputs) - 2) % groups != 0 || std::ssize(c.n.inputs) == 2)
    throw Error(c.n.opType + " needs R, T and " + std::to_string(groups) + " inputs per tensor");
  OptimizerInputs o;
  o.n = static_cast<size_t>(std::ssize(c.n.inputs) - 2) / groups;
  DType t = c.dtype(c.in(2));
  if (!isFloating(t)) throw Error(c.n.opType + " updates floating-point tensors only");
  o.r = c.cast(c.in(0), t);
  o.t = c.cast(c.in(1), t);
  return o;
}

ValueId mulBy(OnnxNode& c, double k, ValueId x) { return c.emit("mul", {c.scalar(k, c.dtype(x)), x}); }

// norm_coefficient * X + G: the gradient with L2 regularization.
ValueId regularized(OnnxNode& c, ValueId x, ValueId g) { return c.emit("add", {mulBy(c, c.attrFloat("norm_coefficient", 0), x), g}); }

OnnxOutputs adagrad(OnnxNode& c) {
  OptimizerInputs o = optimizerInputs(c, 3);  // X, G, H
  double decay = c.attrFloat("decay_factor", 0), eps = c.attrFloat("epsilon", 1e-6);
  DType t = c.dtype(o.r);
  ValueId rate = c.emit("div", {o.r, c.emit("add", {c.scalar(1, t), mulBy(c, decay, o.t)})});
  OnnxOutputs xs, hs;
  for (size_t i = 0; i < o.n; ++i) {
    ValueId x = o.member(c, 0, i), g = regularized(c, x, o.member(c, 1, i)), h = o.member(c, 2, i);
    ValueId hNew = c.emit("add", {h, c.emit("mul", {g, g})});
    ValueId adaptive = c.emit("add", {c.emit("sqrt", {hNew}), c.scalar(eps, c.dtype(x))});
    xs.push_back(c.emit("sub", {x, c.emit("div", {c.emit("mul", {rate, g}), adaptive})}));
    hs.push_back(hNew);
  }
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

OnnxOutputs momentum(OnnxNode& c) {
  OptimizerInputs o = optimizerInputs(c, 3);  // X, G, V
  double alpha = c.attrFloat("alpha", 0), beta = c.attrFloat("beta", 0);
  std::string mode = c.attrString("mode", "standard");
  if (mode != "standard" && mode != "nesterov") throw Error("Momentum's mode must be standard or nesterov, not '" + mode + "'");
  DType t = c.dtype(o.r);
  // beta on every step but the first (T = 0), where the gradient enters unscaled
  ValueId betaNow = c.emit("where", {c.emit("gt", {o.t, c.scalar(0, t)}), c.scalar(beta, t), c.scalar(1, t)});
  OnnxOutputs xs, vs;
  for (size_t i = 0; i < o.n; ++i) {
    ValueId x = o.member(c, 0, i), g = regularized(c, x, o.member(c, 1, i)), v = o.member(c, 2, i);
    ValueId vNew = c.emit("add", {mulBy(c, alpha, v), c.emit("mul", {betaNow, g})});
    ValueId step = mode == "standard" ? vNew : c.emit("add", {g, mulBy(c, alpha, vNew)});
    xs.push_back(c.emit("sub", {x, c.emit("mul", {o.r, step})}));
    vs.push_back(vNew);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  return xs;
}

OnnxOutputs adam(OnnxNode& c) {
  OptimizerInputs o = optimizerInputs(c, 4);  // X, G, V, H
  double alpha = c.attrFloat("alpha", 0.9), beta = c.attrFloat("beta", 0.999), eps = c.attrFloat("epsilon", 1e-6);
  double post = c.attrFloat("norm_coefficient_post", 0);
  DType t = c.dtype(o.r);
  // R * sqrt(1 - beta^T) / (1 - alpha^T) after the first step, R on it
  ValueId correction = c.emit("div", {c.emit("sqrt", {c.emit("sub", {c.scalar(1, t), c.emit("pow", {c.scalar(beta, t), o.t})})}),
                                      c.emit("sub", {c.scalar(1, t), c.emit("pow", {c.scalar(alpha, t), o.t})})});
  ValueId rate = c.emit("where", {c.emit("gt", {o.t, c.scalar(0, t)}), c.emit("mul", {o.r, correction}), o.r});
  OnnxOutputs xs, vs, hs;
  for (size_t i = 0; i < o.n; ++i) {
    ValueId x = o.member(c, 0, i), g = regularized(c, x, o.member(c, 1, i)), v = o.member(c, 2, i), h = o.member(c, 3, i);
    ValueId vNew = c.emit("add", {mulBy(c, alpha, v), mulBy(c, 1 - alpha, g)});
    ValueId hNew = c.emit("add", {mulBy(c, beta, h), mulBy(c, 1 - beta, c.emit("mul", {g, g}))});
    ValueId denom = c.emit("add", {c.emit("sqrt", {hNew}), c.scalar(eps, c.dtype(x))});
    ValueId xNew = c.emit("sub", {x, c.emit("mul", {rate, c.emit("div", {vNew, denom})})});
    xs.push_back(post == 0 ? xNew : mulBy(c, 1 - post, xNew));
    vs.push_back(vNew);
    hs.push_back(hNew);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

}  // namespace

void addTrainingImporters(OnnxImporters& m) {
  m[std::string(kOnnxTrainingDomain) + ":Adagrad"] = adagrad;
  m[std::string(kOnnxTrainingDomain) + ":Momentum"] = momentum;
  m[std::string(kOnnxTrainingDomain) + ":Adam"] = adam;
}

}  // namespace fusebox

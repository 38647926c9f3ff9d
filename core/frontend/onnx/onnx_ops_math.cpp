// ONNX elementwise ops, activations, logic and reductions as registry ops (compositions where the
// registry has no op of its own, so every stage handles them).

#include <cmath>

#include "core/frontend/onnx/onnx_ops.h"
#include "core/ops/shape_rules.h"

namespace fusebox {

namespace {

using Ints = std::vector<int64_t>;

OnnxImporter unaryOf(std::function<ValueId(OnnxNode&, ValueId)> f) {
  return [f](OnnxNode& c) -> OnnxOutputs {
    ValueId x = c.in(0);
    if (!isFloating(c.dtype(x))) throw OnnxUnsupported("a " + std::string(dtypeName(c.dtype(x))) + " input is not supported (floating point only)");
    return {f(c, x)};
  };
}

// The axes, keepdims and the no-op case of an ONNX reduction. Axes come as an input from
// `axesInputOpset` on (13 for ReduceSum, 18 for the others), as an attribute before.
struct Reduction {
  Ints axes;
  bool keepdim = true;
  bool noop = false;  // empty axes with noop_with_empty_axes: the elementwise part only
};

Reduction reductionAttrs(OnnxNode& c, ValueId x, int64_t axesInputOpset) {
  Reduction r;
  r.axes = c.attrInts("axes");
  if (c.cx.opset >= axesInputOpset && c.has(1)) r.axes = c.intsInput(1, "axes");
  r.keepdim = c.attrInt("keepdims", 1) != 0;
  if (r.axes.empty() && c.attrInt("noop_with_empty_axes", 0)) r.noop = true;
  for (int64_t& a : r.axes) a = c.axis(a, c.rank(x));
  if (r.axes.empty())
    for (size_t i = 0; i < c.rank(x); ++i) r.axes.push_back(static_cast<int64_t>(i));
  return r;
}

// A reduction `op` of pre(x), then post(): the L1/L2/log-sum family.
OnnxImporter reductionOf(const std::string& op, int64_t axesInputOpset, std::function<ValueId(OnnxNode&, ValueId)> pre = nullptr,
                         std::function<ValueId(OnnxNode&, ValueId)> post = nullptr) {
  return [=](OnnxNode& c) -> OnnxOutputs {
    ValueId x = c.in(0);
    Reduction r = reductionAttrs(c, x, axesInputOpset);
    if (pre) x = pre(c, x);
    if (r.noop) return {post ? post(c, x) : x};
    ValueId y = c.emit(op, {x}, {{"dim", r.axes}, {"keepdim", r.keepdim}});
    return {post ? post(c, y) : y};
  };
}

ValueId square(OnnxNode& c, ValueId x) { return c.emit("mul", {x, x}); }

// log(sum(exp(x))) with the max subtracted first (exp of large inputs would overflow).
OnnxOutputs logSumExp(OnnxNode& c) {
  ValueId x = c.in(0);
  Reduction r = reductionAttrs(c, x, 18);
  if (r.noop) return {x};
  ValueId m = c.emit("amax", {x}, {{"dim", r.axes}, {"keepdim", true}});
  // An all -inf slice has max -inf: shift by 0 there so that the result is -inf, not NaN.
  m = c.emit("where", {c.emit("eq", {m, c.scalar(-INFINITY, c.dtype(x))}), c.scalar(0, c.dtype(x)), m});
  ValueId s = c.emit("log", {c.emit("sum", {c.emit("exp", {c.emit("sub", {x, m})})}, {{"dim", r.axes}, {"keepdim", true}})});
  ValueId y = c.emit("add", {s, m});
  return {r.keepdim ? y : c.reshape(y, OnnxNode::sizesOf(reducedShape(c.shape(x), r.axes, false)))};
}

}  // namespace

ValueId onnxSoftplus(OnnxNode& c, ValueId x) {  // relu(x) + log(1 + exp(-|x|)): no overflow
  DType t = c.dtype(x);
  ValueId e = c.emit("exp", {c.emit("neg", {c.emit("abs", {x})})});
  return c.emit("add", {c.emit("relu", {x}), c.emit("log", {c.emit("add", {e, c.scalar(1, t)})})});
}

ValueId onnxElu(OnnxNode& c, ValueId x, double alpha) {
  DType t = c.dtype(x);
  ValueId neg = c.emit("mul", {c.emit("sub", {c.emit("exp", {x}), c.scalar(1, t)}), c.scalar(alpha, t)});
  return c.emit("where", {c.emit("gt", {x, c.scalar(0, t)}), x, neg});
}

ValueId onnxClamp(OnnxNode& c, ValueId x, double lo, double hi) {
  DType t = c.dtype(x);
  return c.emit("minimum", {c.emit("maximum", {x, c.scalar(lo, t)}), c.scalar(hi, t)});
}

namespace {

OnnxImporter binary(const char* op) {
  return [op = std::string(op)](OnnxNode& c) -> OnnxOutputs { return {c.emit(op, {c.in(0), c.in(1)})}; };
}

OnnxImporter variadic(const char* op) {
  return [op = std::string(op)](OnnxNode& c) -> OnnxOutputs {
    ValueId v = c.in(0);
    for (int i = 1; i < std::ssize(c.n.inputs); ++i) v = c.emit(op, {v, c.in(i)});
    return {v};
  };
}

ValueId arcSine(OnnxNode& c, ValueId x) {  // atan(x / sqrt(1 - x^2)); +-1 give +-inf inside, +-pi/2 out
  return c.emit("atan", {c.emit("div", {x, c.emit("sqrt", {c.emit("sub", {c.scalar(1, c.dtype(x)), c.emit("mul", {x, x})})})})});
}

ValueId ceiling(OnnxNode& c, ValueId x) { return c.emit("neg", {c.emit("floor", {c.emit("neg", {x})})}); }

ValueId boolConst(OnnxNode& c, bool v) { return c.scalar(v ? 1 : 0, DType::Bool); }

ValueId requireBool(OnnxNode& c, int i) {
  ValueId v = c.in(i);
  if (c.dtype(v) != DType::Bool) throw OnnxUnsupported("input " + std::to_string(i) + " must be bool");
  return v;
}

}  // namespace

void addMathImporters(OnnxImporters& m) {
  for (auto [onnxOp, op] : std::vector<std::pair<const char*, const char*>>{
           {"Relu", "relu"}, {"Sigmoid", "sigmoid"}, {"Tanh", "tanh"}, {"Exp", "exp"}, {"Log", "log"}, {"Sqrt", "sqrt"},
           {"Erf", "erf"}, {"Sin", "sin"}, {"Cos", "cos"}, {"Atan", "atan"}, {"Floor", "floor"}, {"Round", "round"}})
    m[onnxOp] = unaryOf([op = std::string(op)](OnnxNode& c, ValueId x) { return c.emit(op, {x}); });
  m["Neg"] = [](OnnxNode& c) -> OnnxOutputs { return {c.emit("neg", {c.in(0)})}; };
  m["Abs"] = [](OnnxNode& c) -> OnnxOutputs { return {c.emit("abs", {c.in(0)})}; };
  m["Reciprocal"] = unaryOf([](OnnxNode& c, ValueId x) { return c.emit("div", {c.scalar(1, c.dtype(x)), x}); });
  m["Softplus"] = unaryOf(onnxSoftplus);
  m["Softsign"] = unaryOf([](OnnxNode& c, ValueId x) {
    return c.emit("div", {x, c.emit("add", {c.emit("abs", {x}), c.scalar(1, c.dtype(x))})});
  });
  m["Mish"] = unaryOf([](OnnxNode& c, ValueId x) { return c.emit("mul", {x, c.emit("tanh", {onnxSoftplus(c, x)})}); });
  m["Elu"] = unaryOf([](OnnxNode& c, ValueId x) { return onnxElu(c, x, c.attrFloat("alpha", 1.0)); });
  m["Selu"] = unaryOf([](OnnxNode& c, ValueId x) {
    double alpha = c.attrFloat("alpha", 1.67326319217681884765625), gamma = c.attrFloat("gamma", 1.05070102214813232421875);
    return c.emit("mul", {onnxElu(c, x, alpha), c.scalar(gamma, c.dtype(x))});
  });
  m["Celu"] = unaryOf([](OnnxNode& c, ValueId x) {  // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
    DType t = c.dtype(x);
    double alpha = c.attrFloat("alpha", 1.0);
    ValueId e = c.emit("mul", {c.emit("sub", {c.emit("exp", {c.emit("div", {x, c.scalar(alpha, t)})}), c.scalar(1, t)}), c.scalar(alpha, t)});
    return c.emit("add", {c.emit("relu", {x}), c.emit("minimum", {e, c.scalar(0, t)})});
  });
  m["HardSigmoid"] = unaryOf([](OnnxNode& c, ValueId x) {
    DType t = c.dtype(x);
    ValueId lin = c.emit("add", {c.emit("mul", {x, c.scalar(c.attrFloat("alpha", 0.2), t)}), c.scalar(c.attrFloat("beta", 0.5), t)});
    return onnxClamp(c, lin, 0, 1);
  });
  m["HardSwish"] = unaryOf([](OnnxNode& c, ValueId x) {
    DType t = c.dtype(x);
    ValueId lin = c.emit("add", {c.emit("mul", {x, c.scalar(1.0 / 6, t)}), c.scalar(0.5, t)});
    return c.emit("mul", {x, onnxClamp(c, lin, 0, 1)});
  });
  m["ThresholdedRelu"] = unaryOf([](OnnxNode& c, ValueId x) {
    DType t = c.dtype(x);
    return c.emit("where", {c.emit("gt", {x, c.scalar(c.attrFloat("alpha", 1.0), t)}), x, c.scalar(0, t)});
  });
  m["LeakyRelu"] = unaryOf([](OnnxNode& c, ValueId x) {
    DType t = c.dtype(x);
    return c.emit("where", {c.emit("gt", {x, c.scalar(0, t)}), x, c.emit("mul", {x, c.scalar(c.attrFloat("alpha", 0.01), t)})});
  });
  m["PRelu"] = [](OnnxNode& c) -> OnnxOutputs {
    ValueId x = c.in(0), slope = c.in(1);
    // A 1-D slope of C values is per channel (dim 1) before opset 7, and wherever it could not
    // broadcast against the last dim.
    std::vector<int64_t> xs = c.sizes(x), ss = c.sizes(slope);
    if (ss.size() == 1 && xs.size() >= 2 && ss[0] == xs[1] && ss[0] > 1 && (c.cx.opset < 7 || ss[0] != xs.back())) {
      std::vector<int64_t> channel(xs.size(), 1);
      channel[1] = ss[0];
      slope = c.reshape(slope, channel);
    }
    return {c.emit("where", {c.emit("lt", {x, c.scalar(0, c.dtype(x))}), c.emit("mul", {x, slope}), x})};
  };
  m["Shrink"] = unaryOf([](OnnxNode& c, ValueId x) {
    DType t = c.dtype(x);
    double lambd = c.attrFloat("lambd", 0.5), bias = c.attrFloat("bias", 0.0);
    ValueId inner = c.emit("where", {c.emit("gt", {x, c.scalar(lambd, t)}), c.emit("sub", {x, c.scalar(bias, t)}), c.scalar(0, t)});
    return c.emit("where", {c.emit("lt", {x, c.scalar(-lambd, t)}), c.emit("add", {x, c.scalar(bias, t)}), inner});
  });
  m["Sign"] = [](OnnxNode& c) -> OnnxOutputs {
    ValueId x = c.in(0);
    DType t = c.dtype(x);
    ValueId negOrZero = c.emit("where", {c.emit("lt", {x, c.scalar(0, t)}), c.scalar(-1, t), c.scalar(0, t)});
    return {c.emit("where", {c.emit("gt", {x, c.scalar(0, t)}), c.scalar(1, t), negOrZero})};
  };
  m["Ceil"] = unaryOf(ceiling);
  m["Tan"] = unaryOf([](OnnxNode& c, ValueId x) { return c.emit("div", {c.emit("sin", {x}), c.emit("cos", {x})}); });
  m["Asin"] = unaryOf(arcSine);
  m["Acos"] = unaryOf([](OnnxNode& c, ValueId x) { return c.emit("sub", {c.scalar(M_PI / 2, c.dtype(x)), arcSine(c, x)}); });
  m["Mod"] = [](OnnxNode& c) -> OnnxOutputs {
    // fmod=1: a - b * trunc(a / b) (sign of a); fmod=0: a - b * floor(a / b) (sign of b, integers).
    // Integers go through f64, exact for the values they can hold here.
    ValueId a = c.in(0), b = c.in(1);
    DType t = c.dtype(a);
    bool fmod = c.attrInt("fmod", 0) != 0;
    if (!fmod && isFloating(t)) throw Error("Mod of floating point inputs needs fmod=1");
    DType wide = isFloating(t) ? t : DType::F64;
    ValueId x = c.cast(a, wide), y = c.cast(b, wide);
    ValueId q = c.emit("div", {x, y});
    ValueId floor = c.emit("floor", {q});
    ValueId whole = fmod ? c.emit("where", {c.emit("lt", {q, c.scalar(0, wide)}), ceiling(c, q), floor}) : floor;  // trunc or floor
    return {c.cast(c.emit("sub", {x, c.emit("mul", {y, whole})}), t)};
  };
  // Hyperbolic functions and their inverses from exp, log and sqrt.
  m["Sinh"] = unaryOf([](OnnxNode& c, ValueId x) {
    return c.emit("mul", {c.emit("sub", {c.emit("exp", {x}), c.emit("exp", {c.emit("neg", {x})})}), c.scalar(0.5, c.dtype(x))});
  });
  m["Cosh"] = unaryOf([](OnnxNode& c, ValueId x) {
    return c.emit("mul", {c.emit("add", {c.emit("exp", {x}), c.emit("exp", {c.emit("neg", {x})})}), c.scalar(0.5, c.dtype(x))});
  });
  m["Asinh"] = unaryOf([](OnnxNode& c, ValueId x) {
    DType t = c.dtype(x);
    return c.emit("log", {c.emit("add", {x, c.emit("sqrt", {c.emit("add", {square(c, x), c.scalar(1, t)})})})});
  });
  m["Acosh"] = unaryOf([](OnnxNode& c, ValueId x) {
    DType t = c.dtype(x);
    return c.emit("log", {c.emit("add", {x, c.emit("sqrt", {c.emit("sub", {square(c, x), c.scalar(1, t)})})})});
  });
  m["Atanh"] = unaryOf([](OnnxNode& c, ValueId x) {
    DType t = c.dtype(x);
    ValueId ratio = c.emit("div", {c.emit("add", {c.scalar(1, t), x}), c.emit("sub", {c.scalar(1, t), x})});
    return c.emit("mul", {c.emit("log", {ratio}), c.scalar(0.5, t)});
  });

  for (auto [onnxOp, op] : std::vector<std::pair<const char*, const char*>>{
           {"Add", "add"}, {"Sub", "sub"}, {"Mul", "mul"}, {"Div", "div"}, {"Equal", "eq"}, {"Less", "lt"}, {"Greater", "gt"},
           {"LessOrEqual", "le"}, {"GreaterOrEqual", "ge"}, {"MatMul", "matmul"}})
    m[onnxOp] = binary(op);
  m["Max"] = variadic("maximum");
  m["Min"] = variadic("minimum");
  m["Sum"] = variadic("add");
  m["Mean"] = [](OnnxNode& c) -> OnnxOutputs {
    ValueId s = variadic("add")(c)[0];
    return {c.emit("div", {s, c.scalar(std::ssize(c.n.inputs), c.dtype(s))})};
  };
  m["Pow"] = [](OnnxNode& c) -> OnnxOutputs {  // the exponent may have another type than the base; the result has the base's
    ValueId base = c.in(0);
    DType t = c.dtype(base);
    // A constant exponent of 2 or 3 that broadcasts to nothing new (GPT-2's tanh GELU, RMSNorm's
    // square): multiplications, which vectorize, instead of a pow call per element. x*x is what
    // powf(x, 2) rounds to; x*x*x may differ from powf(x, 3) in the last bit.
    if (isFloating(t) && c.has(1))
      if (auto e = c.cx.constants.find(c.n.inputs[1]); e != c.cx.constants.end() && e->second->data.size() == 1 &&
                                                      e->second->sizes.size() <= c.inType(0).shape.size()) {
        double p = e->second->data[0];
        if (p == 2) return {c.emit("mul", {base, base})};
        if (p == 3) return {c.emit("mul", {c.emit("mul", {base, base}), base})};
      }
    if (isFloating(t)) return {c.emit("pow", {base, c.cast(c.in(1), t)})};
    if (t == DType::Bool) throw OnnxUnsupported("Pow of a bool base is not supported");
    // An integer base: in f64 (exact for results below 2^53), truncated back to the base's type.
    return {c.cast(c.emit("pow", {c.cast(base, DType::F64), c.cast(c.in(1), DType::F64)}), t)};
  };
  m["Clip"] = [](OnnxNode& c) -> OnnxOutputs {
    ValueId x = c.in(0);
    if (c.cx.opset < 11) return {onnxClamp(c, x, c.attrFloat("min", -INFINITY), c.attrFloat("max", INFINITY))};
    // A constant scalar bound (ReLU6's 0 and 6 are initializers) becomes a literal, so that the
    // clamp is one the schedule can fuse into a convolution's epilogue; floats only (a double
    // holds every f32/f16/bf16/f64 exactly, not every int64).
    auto bound = [&](int i) {
      auto k = c.cx.constants.find(c.n.inputs[i]);
      bool literal = k != c.cx.constants.end() && k->second->rank() == 0 && k->second->numel() == 1 && isFloating(c.dtype(x)) &&
                     k->second->dtype == c.dtype(x);
      return literal ? c.scalar(k->second->data[0], c.dtype(x)) : c.in(i);
    };
    if (c.has(1)) x = c.emit("maximum", {x, bound(1)});
    if (c.has(2)) x = c.emit("minimum", {x, bound(2)});
    return {x};
  };
  m["BitShift"] = [](OnnxNode& c) -> OnnxOutputs {  // x * 2^y or floor(x / 2^y), in f64 (exact below 2^53)
    ValueId x = c.in(0);
    DType t = c.dtype(x);
    if (!isInteger(t)) throw Error("BitShift needs integer inputs");
    std::string direction = c.attrString("direction", "");
    if (direction != "LEFT" && direction != "RIGHT") throw Error("direction must be LEFT or RIGHT");
    ValueId scale = c.emit("pow", {c.scalar(2, DType::F64), c.cast(c.in(1), DType::F64)});
    ValueId xf = c.cast(x, DType::F64);
    ValueId y = direction == "LEFT" ? c.emit("mul", {xf, scale}) : c.emit("floor", {c.emit("div", {xf, scale})});
    return {c.cast(y, t)};
  };
  m["Where"] = [](OnnxNode& c) -> OnnxOutputs { return {c.emit("where", {c.in(0), c.in(1), c.in(2)})}; };
  m["Not"] = [](OnnxNode& c) -> OnnxOutputs { return {c.emit("where", {requireBool(c, 0), boolConst(c, false), boolConst(c, true)})}; };
  m["And"] = [](OnnxNode& c) -> OnnxOutputs { return {c.emit("where", {requireBool(c, 0), requireBool(c, 1), boolConst(c, false)})}; };
  m["Or"] = [](OnnxNode& c) -> OnnxOutputs { return {c.emit("where", {requireBool(c, 0), boolConst(c, true), requireBool(c, 1)})}; };
  m["Xor"] = [](OnnxNode& c) -> OnnxOutputs { return {c.emit("ne", {requireBool(c, 0), requireBool(c, 1)})}; };
  m["IsNaN"] = [](OnnxNode& c) -> OnnxOutputs {
    ValueId x = c.in(0);
    return {c.emit("ne", {x, x})};
  };
  m["IsInf"] = [](OnnxNode& c) -> OnnxOutputs {
    ValueId x = c.in(0);
    DType t = c.dtype(x);
    bool pos = c.attrInt("detect_positive", 1), neg = c.attrInt("detect_negative", 1);
    ValueId isPos = c.emit("eq", {x, c.scalar(INFINITY, t)}), isNeg = c.emit("eq", {x, c.scalar(-INFINITY, t)});
    if (pos && neg) return {c.emit("where", {isPos, boolConst(c, true), isNeg})};
    if (pos) return {isPos};
    if (neg) return {isNeg};
    return {c.emit("where", {isPos, boolConst(c, false), boolConst(c, false)})};  // neither: all false
  };

  m["ReduceSum"] = reductionOf("sum", 13);
  m["ReduceMean"] = reductionOf("mean", 18);
  m["ReduceMax"] = reductionOf("amax", 18);
  m["ReduceMin"] = reductionOf("amin", 18);
  m["ReduceProd"] = reductionOf("prod", 18);
  m["ReduceL1"] = reductionOf("sum", 18, [](OnnxNode& c, ValueId x) { return c.emit("abs", {x}); });
  m["ReduceL2"] = reductionOf("sum", 18, square, [](OnnxNode& c, ValueId y) { return c.emit("sqrt", {y}); });
  m["ReduceSumSquare"] = reductionOf("sum", 18, square);
  m["ReduceLogSum"] = reductionOf("sum", 18, nullptr, [](OnnxNode& c, ValueId y) { return c.emit("log", {y}); });
  m["ReduceLogSumExp"] = logSumExp;
}

}  // namespace fusebox

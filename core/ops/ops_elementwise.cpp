// Pointwise ops: unary math, broadcasting binary ops, comparisons, where, casts, creation.
#include <climits>

#include "core/ops/binary_math.h"
#include "core/ops/registry.h"
#include "core/ops/shape_rules.h"
#include "core/ops/unary_math.h"

namespace fusebox {

namespace {

void requireFloating(const InferCall& c, size_t i) {
  if (!isFloating(c.inputs[i].dtype))
    shapeFail(c.op, "input " + std::to_string(i) + " must be floating point, got " +
                        std::string(dtypeName(c.inputs[i].dtype)));
}

void requireSameDType(const InferCall& c, size_t i, size_t j) {
  if (c.inputs[i].dtype != c.inputs[j].dtype)
    shapeFail(c.op, "dtype mismatch: " + c.inputs[i].str() + " vs " + c.inputs[j].str());
}

std::vector<TensorType> sameAsInput(const InferCall& c) { return {c.inputs[0]}; }

OpSchema unary(const std::string& name, const std::string& summary, bool floatOnly = true) {
  return OpSchema{name, OpKind::Elementwise, {{"x"}}, false, {},
                  [floatOnly](const InferCall& c) {
                    if (floatOnly) requireFloating(c, 0);
                    else if (c.inputs[0].dtype == DType::Bool) shapeFail(c.op, "bool input is not supported");
                    return sameAsInput(c);
                  },
                  summary};
}

OpSchema binary(const std::string& name, const std::string& summary, bool floatOnly) {
  return OpSchema{name, OpKind::Elementwise, {{"a"}, {"b"}}, false, {},
                  [floatOnly](const InferCall& c) {
                    requireSameDType(c, 0, 1);
                    if (floatOnly) requireFloating(c, 0);
                    if (c.inputs[0].dtype == DType::Bool) shapeFail(c.op, "bool inputs are not supported");
                    return std::vector<TensorType>{
                        {c.inputs[0].dtype, broadcastShapes(c.inputs[0].shape, c.inputs[1].shape, c.op)}};
                  },
                  summary};
}

OpSchema comparison(const std::string& name, const std::string& summary) {
  return OpSchema{name, OpKind::Elementwise, {{"a"}, {"b"}}, false, {},
                  [](const InferCall& c) {
                    requireSameDType(c, 0, 1);
                    return std::vector<TensorType>{
                        {DType::Bool, broadcastShapes(c.inputs[0].shape, c.inputs[1].shape, c.op)}};
                  },
                  summary};
}

DType dtypeAttr(const InferCall& c, const std::string& attr) {
  auto t = parseDType(c.s(attr));
  if (!t) shapeFail(c.op, "unknown dtype '" + c.s(attr) + "' (expected f32, f64, f16, bf16, i64, i32 or bool)");
  return *t;
}

}  // namespace

void registerElementwiseOps(OpRegistry& r) {
  for (const UnaryMath& u : unaryMathOps()) r.add(unary(u.name, u.summary, u.floatOnly));
  r.add(unary("relu", "max(x, 0)", false));
  r.add(unary("sigmoid", "1 / (1 + e^-x)"));
  r.add(unary("silu", "x * sigmoid(x)"));
  r.add(OpSchema{"gelu", OpKind::Elementwise, {{"x"}}, false,
                 {{"approximate", AttrKind::String, Attr(std::string("none"))}},
                 [](const InferCall& c) {
                   requireFloating(c, 0);
                   if (c.s("approximate") != "none" && c.s("approximate") != "tanh")
                     shapeFail(c.op, "approximate must be \"none\" or \"tanh\", got \"" + c.s("approximate") + "\"");
                   return sameAsInput(c);
                 },
                 "x * Phi(x): erf form, or the tanh approximation"});

  for (const BinaryMath& b : binaryMathOps())
    if (b.torchOp)
      r.add(b.result == BinaryMath::Result::Bool ? comparison(b.name, b.summary) : binary(b.name, b.summary, b.floatOnly));

  r.add(OpSchema{"where", OpKind::Elementwise, {{"cond"}, {"a"}, {"b"}}, false, {},
                 [](const InferCall& c) {
                   if (c.inputs[0].dtype != DType::Bool) shapeFail(c.op, "condition must be bool, got " + c.inputs[0].str());
                   requireSameDType(c, 1, 2);
                   Shape s = broadcastShapes(c.inputs[1].shape, c.inputs[2].shape, c.op);
                   return std::vector<TensorType>{{c.inputs[1].dtype, broadcastShapes(c.inputs[0].shape, s, c.op)}};
                 },
                 "cond ? a : b (broadcasting)"});
  r.add(OpSchema{"masked_fill", OpKind::Elementwise, {{"x"}, {"mask"}}, false,
                 {{"value", AttrKind::Float, std::nullopt}},
                 [](const InferCall& c) {
                   if (c.inputs[1].dtype != DType::Bool) shapeFail(c.op, "mask must be bool, got " + c.inputs[1].str());
                   if (broadcastShapes(c.inputs[0].shape, c.inputs[1].shape, c.op) != c.inputs[0].shape)
                     shapeFail(c.op, "mask " + shapeStr(c.inputs[1].shape) + " does not broadcast to " +
                                         shapeStr(c.inputs[0].shape));
                   return sameAsInput(c);
                 },
                 "x with `value` where mask is true"});
  r.add(OpSchema{"to", OpKind::Elementwise, {{"x"}}, false, {{"dtype", AttrKind::String, std::nullopt}},
                 [](const InferCall& c) {
                   return std::vector<TensorType>{{dtypeAttr(c, "dtype"), c.inputs[0].shape}};
                 },
                 "convert to another dtype"});
  r.add(OpSchema{"full", OpKind::Creation, {}, false,
                 {{"shape", AttrKind::Shape, Attr(Shape{})},
                  {"value", AttrKind::Float, std::nullopt},
                  {"dtype", AttrKind::String, Attr(std::string("f32"))}},
                 [](const InferCall& c) {
                   return std::vector<TensorType>{{dtypeAttr(c, "dtype"), c.shape("shape")}};
                 },
                 "a tensor filled with a constant (a scalar when shape is [])"});
  r.add(OpSchema{"arange", OpKind::Creation, {}, false,
                 {{"end", AttrKind::Dim, std::nullopt}, {"dtype", AttrKind::String, Attr(std::string("i64"))}},
                 [](const InferCall& c) {
                   if (c.dim("end").isConstant() && c.dim("end").value() < 0) shapeFail(c.op, "end must be >= 0");
                   return std::vector<TensorType>{{dtypeAttr(c, "dtype"), Shape{c.dim("end")}}};
                 },
                 "0, 1, ..., end-1"});
  r.add(OpSchema{"dropout", OpKind::Random, {{"x"}}, false,
                 {{"p", AttrKind::Float, Attr(0.5)},
                  {"seed", AttrKind::Int, Attr(int64_t{0})},
                  {"training", AttrKind::Bool, Attr(true)}},
                 [](const InferCall& c) {
                   requireFloating(c, 0);
                   if (c.f("p") < 0.0 || c.f("p") >= 1.0) shapeFail(c.op, "p must be in [0, 1)");
                   return sameAsInput(c);
                 },
                 "zero elements with probability p (seeded, counter-based), scale the rest by 1/(1-p)"});
}

}  // namespace fusebox

// Torch-level backward ops that the derivative formulas emit where no composition of forward
// ops expresses the gradient (like aten's *_backward ops). Each has an interpreter kernel and a
// decomposition into prims.
#include "core/ops/registry.h"
#include "core/ops/shape_rules.h"

namespace fusebox {

namespace {

using Types = std::vector<TensorType>;

const std::vector<AttrSpec> kConvAttrs = {{"stride", AttrKind::Ints, Attr(std::vector<int64_t>{1})},
                                          {"padding", AttrKind::Ints, Attr(std::vector<int64_t>{0})},
                                          {"dilation", AttrKind::Ints, Attr(std::vector<int64_t>{1})},
                                          {"groups", AttrKind::Int, Attr(int64_t{1})}};

std::vector<AttrSpec> withShapeAttr(const char* name, AttrKind kind, std::vector<AttrSpec> rest) {
  rest.insert(rest.begin(), AttrSpec{name, kind, std::nullopt});
  return rest;
}

const std::vector<AttrSpec> kPoolAttrs = {{"kernel_size", AttrKind::Ints, std::nullopt},
                                          {"stride", AttrKind::Ints, Attr(std::vector<int64_t>{})},
                                          {"padding", AttrKind::Ints, Attr(std::vector<int64_t>{0})}};

// The gradient has the dtype of `g` and the shape given by attribute `attr`.
InferFn shapedLike(const char* attr, size_t gIndex) {
  return [attr, gIndex](const InferCall& c) -> Types {
    if (!isFloating(c.inputs[gIndex].dtype)) shapeFail(c.op, "gradient must be floating point");
    const Attr& a = c.attrs.at(attr);
    Shape s = std::holds_alternative<Shape>(a) ? std::get<Shape>(a) : shapeOf(std::get<std::vector<int64_t>>(a));
    return {{c.inputs[gIndex].dtype, s}};
  };
}

}  // namespace

void registerBackwardOps(OpRegistry& r) {
  r.add(OpSchema{"conv2d_backward_input", OpKind::Conv, {{"grad"}, {"weight"}}, false,
                 withShapeAttr("input_shape", AttrKind::Shape, kConvAttrs), shapedLike("input_shape", 0),
                 "gradient of conv2d with respect to its input (a transposed convolution)"});
  r.add(OpSchema{"conv2d_backward_weight", OpKind::Conv, {{"x"}, {"grad"}}, false,
                 withShapeAttr("weight_shape", AttrKind::Ints, kConvAttrs), shapedLike("weight_shape", 1),
                 "gradient of conv2d with respect to its weight"});
  r.add(OpSchema{"max_pool2d_backward", OpKind::Pool, {{"grad"}, {"x"}}, false, kPoolAttrs,
                 [](const InferCall& c) -> Types { return {c.inputs[1]}; },
                 "routes each window's gradient to its (first) maximum"});
  r.add(OpSchema{"avg_pool2d_backward", OpKind::Pool, {{"grad"}}, false,
                 withShapeAttr("input_shape", AttrKind::Shape, kPoolAttrs), shapedLike("input_shape", 0),
                 "spreads each window's gradient evenly over the window"});
  r.add(OpSchema{"adaptive_avg_pool2d_backward", OpKind::Pool, {{"grad"}}, false,
                 {{"input_shape", AttrKind::Shape, std::nullopt}}, shapedLike("input_shape", 0),
                 "spreads each adaptive window's gradient evenly over the window"});
  r.add(OpSchema{"embedding_backward", OpKind::Elementwise, {{"grad"}, {"indices"}}, false,
                 {{"num_weights", AttrKind::Int, std::nullopt}},
                 [](const InferCall& c) -> Types {
                   if (!isInteger(c.inputs[1].dtype)) shapeFail(c.op, "indices must be integers");
                   const Shape& g = c.inputs[0].shape;
                   if (g.size() != c.inputs[1].shape.size() + 1) shapeFail(c.op, "grad must be indices' shape plus one dim");
                   return {{c.inputs[0].dtype, Shape{Dim(c.i("num_weights")), g.back()}}};
                 },
                 "sums gradient rows into the embedding rows they were gathered from"});
  r.add(OpSchema{"slice_backward", OpKind::View, {{"grad"}}, false,
                 {{"input_shape", AttrKind::Shape, std::nullopt},
                  {"dim", AttrKind::Int, std::nullopt},
                  {"start", AttrKind::Int, std::nullopt},
                  {"step", AttrKind::Int, Attr(int64_t{1})}},
                 shapedLike("input_shape", 0), "places the gradient of a slice into zeros of the input's shape"});
  r.add(OpSchema{"sym_size", OpKind::Creation, {}, false,
                 {{"size", AttrKind::Dim, std::nullopt}, {"dtype", AttrKind::String, Attr(std::string("f32"))}},
                 [](const InferCall& c) -> Types {
                   auto t = parseDType(c.s("dtype"));
                   if (!t) shapeFail(c.op, "unknown dtype '" + c.s("dtype") + "'");
                   return {{*t, Shape{}}};
                 },
                 "a scalar holding a (possibly symbolic) size, e.g. the count a mean divides by"});
}

}  // namespace fusebox

// Reductions over dimensions, and the softmax family (a reduction plus a pointwise epilogue).
#include "core/ops/registry.h"
#include "core/ops/shape_rules.h"

#include <algorithm>

namespace fusebox {

Shape reducedShape(const Shape& in, const std::vector<int64_t>& axes, bool keepdim) {
  Shape out;
  for (size_t i = 0; i < in.size(); ++i) {
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end();
    if (!reduced) out.push_back(in[i]);
    else if (keepdim) out.push_back(Dim(1));
  }
  return out;
}

namespace {

OpSchema reduction(const std::string& name, const std::string& summary, bool floatOnly) {
  return OpSchema{name, OpKind::Reduction, {{"x"}}, false,
                  {{"dim", AttrKind::Ints, Attr(std::vector<int64_t>{})}, {"keepdim", AttrKind::Bool, Attr(false)}},
                  [floatOnly](const InferCall& c) {
                    const TensorType& x = c.inputs[0];
                    if (floatOnly && !isFloating(x.dtype)) shapeFail(c.op, "input must be floating point, got " + x.str());
                    if (x.dtype == DType::Bool) shapeFail(c.op, "bool input is not supported");
                    auto axes = reductionAxes(c.ints("dim"), x.shape.size(), c.op);
                    return std::vector<TensorType>{{x.dtype, reducedShape(x.shape, axes, c.b("keepdim"))}};
                  },
                  summary};
}

OpSchema softmaxLike(const std::string& name, const std::string& summary) {
  return OpSchema{name, OpKind::Reduction, {{"x"}}, false, {{"dim", AttrKind::Int, Attr(int64_t{-1})}},
                  [](const InferCall& c) {
                    if (!isFloating(c.inputs[0].dtype)) shapeFail(c.op, "input must be floating point");
                    if (c.inputs[0].shape.empty()) shapeFail(c.op, "input must have at least one dimension");
                    normalizeAxis(c.i("dim"), c.inputs[0].shape.size(), c.op);
                    return std::vector<TensorType>{c.inputs[0]};
                  },
                  summary};
}

}  // namespace

void registerReductionOps(OpRegistry& r) {
  r.add(reduction("sum", "sum over `dim` (all dims when empty)", false));
  r.add(reduction("mean", "mean over `dim` (all dims when empty)", true));
  r.add(reduction("amax", "maximum over `dim` (all dims when empty)", false));
  r.add(reduction("amin", "minimum over `dim` (all dims when empty)", false));
  r.add(reduction("prod", "product over `dim` (all dims when empty)", false));
  r.add(softmaxLike("softmax", "exp(x - max) / sum(exp(x - max)) along `dim`"));
  r.add(softmaxLike("log_softmax", "x - max - log(sum(exp(x - max))) along `dim`"));
}

}  // namespace fusebox

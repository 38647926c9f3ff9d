#include "op_cases.h"

#include <climits>
#include <cmath>

#include "core/interp/random.h"
#include "core/ops/registry.h"

namespace fusebox::test {

namespace {
using K = InputGen::Kind;
using Ints = std::vector<int64_t>;
InputGen N(Ints s) { return {std::move(s), K::Normal, 0}; }
InputGen P(Ints s) { return {std::move(s), K::Positive, 0}; }
InputGen A(Ints s) { return {std::move(s), K::AwayFromZero, 0}; }
InputGen I(Ints s, int64_t range) { return {std::move(s), K::Int, range}; }
InputGen B(Ints s) { return {std::move(s), K::Bool, 0}; }
}  // namespace

const std::vector<OpCase>& opCases() {
  static const std::vector<OpCase> cases = {
      {"neg", "neg", {N({3, 4})}, {}},
      {"abs", "abs", {A({3, 4})}, {}},
      {"relu", "relu", {A({3, 4})}, {}},
      {"exp", "exp", {N({3, 4})}, {}},
      {"log", "log", {P({3, 4})}, {}},
      {"tanh", "tanh", {N({3, 4})}, {}},
      {"sigmoid", "sigmoid", {N({3, 4})}, {}},
      {"silu", "silu", {N({3, 4})}, {}},
      {"sqrt", "sqrt", {P({3, 4})}, {}},
      {"rsqrt", "rsqrt", {P({3, 4})}, {}},
      {"erf", "erf", {N({3, 4})}, {}},
      {"sin", "sin", {N({3, 4})}, {}},
      {"cos", "cos", {N({3, 4})}, {}},
      {"atan", "atan", {N({3, 4})}, {}},
      {"floor", "floor", {N({3, 4})}, {}},
      {"round", "round", {N({3, 4})}, {}},
      {"gelu", "gelu", {N({3, 4})}, {}},
      {"gelu_tanh", "gelu", {N({3, 4})}, {{"approximate", std::string("tanh")}}},
      {"add_broadcast", "add", {N({2, 3, 4}), N({3, 1})}, {}},
      {"sub", "sub", {N({3, 4}), N({4})}, {}},
      {"mul_broadcast", "mul", {N({2, 1, 4}), N({3, 4})}, {}},
      {"div", "div", {N({3, 4}), A({3, 4})}, {}},
      {"pow", "pow", {P({3, 4}), N({3, 4})}, {}},
      {"atan2", "atan2", {N({2, 3, 4}), A({3, 1})}, {}},
      {"hypot", "hypot", {N({2, 1, 5}), A({3, 5})}, {}},
      {"maximum", "maximum", {N({3, 4}), N({3, 4})}, {}},
      {"minimum", "minimum", {N({3, 4}), N({1, 4})}, {}},
      {"eq", "eq", {I({6}, 3), I({6}, 3)}, {}},
      {"ne", "ne", {N({4}), N({4})}, {}},
      {"lt", "lt", {N({4}), N({4})}, {}},
      {"le", "le", {N({4}), N({4})}, {}},
      {"gt", "gt", {N({4}), N({4})}, {}},
      {"ge", "ge", {N({4}), N({4})}, {}},
      {"where", "where", {B({3, 1}), N({3, 4}), N({4})}, {}},
      {"masked_fill", "masked_fill", {N({2, 3, 4}), B({3, 4})}, {{"value", -2.5}}},
      {"to_f32", "to", {N({3, 4})}, {{"dtype", std::string("f32")}}},
      {"full", "full", {}, {{"shape", Ints{2, 3}}, {"value", 1.5}, {"dtype", std::string("f64")}}},
      {"arange", "arange", {}, {{"end", Dim(5)}, {"dtype", std::string("i64")}}},
      {"dropout", "dropout", {N({8, 8})}, {{"p", 0.25}, {"seed", int64_t{11}}}},
      {"dropout_eval", "dropout", {N({4})}, {{"p", 0.5}, {"training", false}}},
      {"sum", "sum", {N({2, 3, 4})}, {{"dim", Ints{1}}}},
      {"sum_all", "sum", {N({2, 3})}, {}},
      {"mean_keepdim", "mean", {N({2, 3, 4})}, {{"dim", Ints{0, 2}}, {"keepdim", true}}},
      {"amax", "amax", {N({3, 5})}, {{"dim", Ints{1}}}},
      {"amin", "amin", {N({3, 5})}, {{"dim", Ints{0}}, {"keepdim", true}}},
      {"prod", "prod", {A({3, 5})}, {{"dim", Ints{1}}}},
      {"prod_all_keepdim", "prod", {A({2, 3})}, {{"keepdim", true}}},
      {"softmax", "softmax", {N({3, 5})}, {{"dim", int64_t{-1}}}},
      {"softmax_dim0", "softmax", {N({3, 5})}, {{"dim", int64_t{0}}}},
      {"log_softmax", "log_softmax", {N({3, 5})}, {{"dim", int64_t{1}}}},
      {"linear", "linear", {N({2, 3, 4}), N({5, 4}), N({5})}, {}},
      {"linear_nobias", "linear", {N({3, 4}), N({5, 4})}, {}},
      {"matmul_batched", "matmul", {N({2, 1, 3, 4}), N({3, 4, 2})}, {}},
      {"matmul_vector", "matmul", {N({4}), N({2, 4, 3})}, {}},
      {"matmul_matvec", "matmul", {N({3, 4}), N({4})}, {}},
      // A 2-D (or 1-D) weight shared by every batch: its gradient is one GEMM over flattened rows.
      {"matmul_shared_weight", "matmul", {N({2, 3, 5, 4}), N({4, 3})}, {}},
      {"matmul_shared_vector", "matmul", {N({2, 3, 4}), N({4})}, {}},
      {"bmm", "bmm", {N({2, 3, 4}), N({2, 4, 5})}, {}},
      {"layer_norm", "layer_norm", {N({2, 3, 6}), N({6}), N({6})}, {{"normalized_shape", Ints{6}}}},
      {"layer_norm_2d_noaffine", "layer_norm", {N({2, 3, 4})}, {{"normalized_shape", Ints{3, 4}}}},
      {"batch_norm_eval", "batch_norm", {N({2, 3, 2, 2}), N({3}), N({3}), N({3}), P({3})}, {}},
      {"batch_norm_train", "batch_norm", {N({3, 2, 2, 2}), N({2}), N({2}), N({2}), P({2})}, {{"training", true}}},
      {"conv2d", "conv2d", {N({2, 2, 5, 5}), N({3, 2, 3, 3}), N({3})}, {{"padding", Ints{1}}, {"stride", Ints{2}}}},
      {"conv2d_groups_dilation", "conv2d", {N({1, 4, 6, 6}), N({2, 2, 2, 2})}, {{"groups", int64_t{2}}, {"dilation", Ints{2}}}},
      {"max_pool2d", "max_pool2d", {N({2, 2, 4, 4})}, {{"kernel_size", Ints{2}}}},
      {"max_pool2d_padded", "max_pool2d", {N({1, 2, 5, 5})}, {{"kernel_size", Ints{3}}, {"stride", Ints{2}}, {"padding", Ints{1}}}},
      {"avg_pool2d", "avg_pool2d", {N({1, 2, 5, 5})}, {{"kernel_size", Ints{3}}, {"stride", Ints{2}}, {"padding", Ints{1}}}},
      {"adaptive_avg_pool2d", "adaptive_avg_pool2d", {N({2, 2, 5, 5})}, {{"output_size", Ints{2, 3}}}},
      {"embedding", "embedding", {I({2, 3}, 4), N({4, 5})}, {}},
      {"cross_entropy", "cross_entropy", {N({4, 6}), I({4}, 6)}, {}},
      {"mse_loss", "mse_loss", {N({3, 4}), N({3, 4})}, {}},
      {"reshape", "reshape", {N({2, 3, 4})}, {{"shape", Ints{4, -1}}}},
      {"view", "view", {N({2, 6})}, {{"shape", Ints{3, 4}}}},
      {"permute", "permute", {N({2, 3, 4})}, {{"dims", Ints{2, 0, 1}}}},
      {"transpose", "transpose", {N({2, 3, 4})}, {{"dim0", int64_t{0}}, {"dim1", int64_t{-1}}}},
      {"expand", "expand", {N({3, 1})}, {{"shape", Ints{2, 3, 4}}}},
      {"slice_step", "slice", {N({3, 7})}, {{"dim", int64_t{1}}, {"start", int64_t{1}}, {"end", int64_t{-1}}, {"step", int64_t{2}}}},
      {"slice", "slice", {N({5, 2})}, {{"dim", int64_t{0}}, {"start", int64_t{-3}}}},
      {"cat", "cat", {N({2, 3}), N({2, 1}), N({2, 2})}, {{"dim", int64_t{1}}}},
      {"conv2d_backward_input", "conv2d_backward_input", {N({1, 3, 3, 3}), N({3, 2, 3, 3})},
       {{"input_shape", Ints{1, 2, 5, 5}}, {"padding", Ints{1}}, {"stride", Ints{2}}}},
      {"conv2d_backward_weight", "conv2d_backward_weight", {N({1, 2, 5, 5}), N({1, 3, 3, 3})},
       {{"weight_shape", Ints{3, 2, 3, 3}}, {"padding", Ints{1}}, {"stride", Ints{2}}}},
      {"max_pool2d_backward", "max_pool2d_backward", {N({1, 2, 2, 2}), N({1, 2, 4, 4})}, {{"kernel_size", Ints{2}}}},
      {"avg_pool2d_backward", "avg_pool2d_backward", {N({1, 2, 3, 3})},
       {{"input_shape", Ints{1, 2, 5, 5}}, {"kernel_size", Ints{3}}, {"stride", Ints{2}}, {"padding", Ints{1}}}},
      {"adaptive_avg_pool2d_backward", "adaptive_avg_pool2d_backward", {N({1, 2, 2, 3})}, {{"input_shape", Ints{1, 2, 5, 5}}}},
      {"embedding_backward", "embedding_backward", {N({2, 3, 5}), I({2, 3}, 4)}, {{"num_weights", int64_t{4}}}},
      {"slice_backward", "slice_backward", {N({3, 3})},
       {{"input_shape", Ints{3, 7}}, {"dim", int64_t{1}}, {"start", int64_t{1}}, {"step", int64_t{2}}}},
      {"sym_size", "sym_size", {}, {{"size", Dim(7)}, {"dtype", std::string("f64")}}},
  };
  return cases;
}

Graph opCaseGraph(const OpCase& c, DType floatType) {
  Graph g;
  g.name = c.name;
  std::vector<ValueId> ins;
  std::vector<TensorType> types;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const InputGen& in = c.inputs[i];
    DType dt = in.kind == K::Int ? DType::I64 : in.kind == K::Bool ? DType::Bool : floatType;
    TensorType t{dt, shapeOf(in.shape)};
    ins.push_back(g.addInput("in" + std::to_string(i), t, InputRole::Input));
    types.push_back(t);
  }
  AttrMap attrs = c.attrs;
  if (floatType != DType::F64 && attrs.count("dtype") && std::get<std::string>(attrs["dtype"]) == "f64")
    attrs["dtype"] = std::string(dtypeName(floatType));
  std::vector<TensorType> outs = inferTypes(c.op, types, attrs);
  NodeId n = g.addNode(c.op, ins, attrs, outs);
  g.setOutputs({g.node(n).outputs[0]});
  return g;
}

std::vector<Tensor> opCaseInputs(const OpCase& c, const Graph& g, uint64_t seed) {
  std::vector<Tensor> out;
  Rng rng(seed * 7919 + std::hash<std::string>{}(c.name));
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const InputGen& in = c.inputs[i];
    Tensor t(g.type(g.inputs()[i].value).dtype, in.shape);
    for (double& x : t.data) {
      switch (in.kind) {
        case K::Normal: x = rng.normal(); break;
        case K::Positive: x = 0.5 + 1.5 * rng.uniform(); break;
        case K::AwayFromZero: x = (rng.uniform() < 0.5 ? -1 : 1) * (0.2 + std::fabs(rng.normal())); break;
        case K::Int: x = std::floor(rng.uniform() * static_cast<double>(in.range)); break;
        case K::Bool: x = rng.uniform() < 0.5 ? 1 : 0; break;
      }
      x = roundToDType(x, t.dtype);
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace fusebox::test

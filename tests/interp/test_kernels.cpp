// Every registry op against hand-computed values, through the interpreter on a one-node graph.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/interp/interpreter.h"
#include "core/interp/kernels.h"
#include "core/ops/registry.h"
#include "test_util.h"

using namespace fusebox;

namespace {

using V = std::vector<double>;
using Ints = std::vector<int64_t>;

std::set<std::string>& testedOps() {
  static std::set<std::string> s;
  return s;
}

Tensor t(std::vector<int64_t> sizes, V values, DType dt = DType::F64) { return Tensor(dt, std::move(sizes), std::move(values)); }

// Builds a one-node graph for `op` over `inputs` and runs it in float64.
Tensor runOp(const std::string& op, const std::vector<Tensor>& inputs, AttrMap attrs = {}) {
  testedOps().insert(op);
  Graph g;
  g.name = op;
  std::vector<ValueId> ins;
  std::vector<TensorType> types;
  for (size_t i = 0; i < inputs.size(); ++i) {
    TensorType ty{inputs[i].dtype, shapeOf(inputs[i].sizes)};
    ins.push_back(g.addInput("in" + std::to_string(i), ty, InputRole::Input));
    types.push_back(ty);
  }
  std::vector<TensorType> outs = inferTypes(op, types, attrs);
  NodeId n = g.addNode(op, ins, attrs, outs);
  g.setOutputs({g.node(n).outputs[0]});
  return interpret(g, inputs, Precision::Float64).at(0);
}

void expectValues(const Tensor& got, std::vector<int64_t> sizes, const V& want, double tol = 1e-12) {
  ASSERT_EQ(got.sizes, sizes);
  ASSERT_EQ(got.data.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got.data[i], want[i], tol) << "element " << i;
}

}  // namespace

TEST(Kernels, Unary) {
  Tensor x = t({3}, {-1, 0, 2});
  expectValues(runOp("neg", {x}), {3}, {1, 0, -2});
  expectValues(runOp("abs", {x}), {3}, {1, 0, 2});
  expectValues(runOp("relu", {x}), {3}, {0, 0, 2});
  expectValues(runOp("exp", {t({2}, {0, 1})}), {2}, {1, M_E});
  expectValues(runOp("log", {t({2}, {1, M_E})}), {2}, {0, 1});
  expectValues(runOp("tanh", {t({2}, {0, 0.5})}), {2}, {0, 0.46211715726000974});
  expectValues(runOp("sigmoid", {t({2}, {0, 2})}), {2}, {0.5, 0.8807970779778823});
  expectValues(runOp("silu", {t({1}, {1})}), {1}, {0.7310585786300049});
  expectValues(runOp("sqrt", {t({2}, {4, 9})}), {2}, {2, 3});
  expectValues(runOp("rsqrt", {t({1}, {4})}), {1}, {0.5});
  expectValues(runOp("erf", {t({1}, {0.5})}), {1}, {0.5204998778130465});
  expectValues(runOp("sin", {t({2}, {0, M_PI / 2})}), {2}, {0, 1});
  expectValues(runOp("cos", {t({2}, {0, M_PI})}), {2}, {1, -1});
  expectValues(runOp("atan", {t({2}, {0, 1})}), {2}, {0, M_PI / 4});
  expectValues(runOp("floor", {t({3}, {1.5, -1.5, 2})}), {3}, {1, -2, 2});
  expectValues(runOp("round", {t({4}, {0.5, 1.5, -2.5, 2.4})}), {4}, {0, 2, -2, 2});  // halves to even
  expectValues(runOp("gelu", {t({2}, {1, -30})}), {2}, {0.8413447460685429, 0});
  expectValues(runOp("gelu", {t({1}, {1})}, {{"approximate", std::string("tanh")}}), {1}, {0.8411919906082768});
}

TEST(Kernels, BinaryBroadcasting) {
  Tensor col = t({2, 1}, {1, 2}), row = t({3}, {10, 20, 30});
  expectValues(runOp("add", {col, row}), {2, 3}, {11, 21, 31, 12, 22, 32});
  expectValues(runOp("sub", {col, row}), {2, 3}, {-9, -19, -29, -8, -18, -28});
  expectValues(runOp("mul", {col, row}), {2, 3}, {10, 20, 30, 20, 40, 60});
  expectValues(runOp("div", {row, t({}, {4})}), {3}, {2.5, 5, 7.5});
  expectValues(runOp("pow", {t({2}, {2, 3}), t({}, {2})}), {2}, {4, 9});
  expectValues(runOp("maximum", {t({3}, {1, 5, 3}), t({3}, {4, 2, 3})}), {3}, {4, 5, 3});
  expectValues(runOp("minimum", {t({3}, {1, 5, 3}), t({3}, {4, 2, 3})}), {3}, {1, 2, 3});
  // atan2(a, b): the angle of (b, a), in every quadrant
  expectValues(runOp("atan2", {t({2, 1}, {1, -1}), t({2}, {1, -1})}), {2, 2},
               {0.7853981633974483, 2.356194490192345, -0.7853981633974483, -2.356194490192345});
  // hypot(a, b) = sqrt(a^2 + b^2), also where a^2 would overflow
  expectValues(runOp("hypot", {t({3}, {3, -5, std::ldexp(3.0, 600)}), t({3}, {4, 12, std::ldexp(4.0, 600)})}), {3},
               {5, 13, std::ldexp(5.0, 600)});
}

TEST(Kernels, ComparisonsWhereMaskedFill) {
  Tensor a = t({3}, {1, 2, 3}), b = t({3}, {2, 2, 2});
  expectValues(runOp("eq", {a, b}), {3}, {0, 1, 0});
  expectValues(runOp("ne", {a, b}), {3}, {1, 0, 1});
  expectValues(runOp("lt", {a, b}), {3}, {1, 0, 0});
  expectValues(runOp("le", {a, b}), {3}, {1, 1, 0});
  expectValues(runOp("gt", {a, b}), {3}, {0, 0, 1});
  expectValues(runOp("ge", {a, b}), {3}, {0, 1, 1});
  Tensor cond = t({2, 1}, {1, 0}, DType::Bool);
  expectValues(runOp("where", {cond, t({2, 2}, {1, 2, 3, 4}), t({}, {-1})}), {2, 2}, {1, 2, -1, -1});
  Tensor mask = t({2}, {0, 1}, DType::Bool);
  Tensor filled = runOp("masked_fill", {t({2, 2}, {1, 2, 3, 4}), mask}, {{"value", -INFINITY}});
  ASSERT_EQ(filled.sizes, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(filled.data[0], 1);
  EXPECT_TRUE(std::isinf(filled.data[1]) && filled.data[1] < 0);
  EXPECT_EQ(filled.data[2], 3);
}

TEST(Kernels, CastsAndCreation) {
  expectValues(runOp("to", {t({3}, {2.7, -2.7, 0.5})}, {{"dtype", std::string("i64")}}), {3}, {2, -2, 0});
  Tensor f32 = runOp("to", {t({1}, {0.1})}, {{"dtype", std::string("f32")}});
  EXPECT_EQ(f32.dtype, DType::F32);
  expectValues(runOp("full", {}, {{"shape", Ints{2}}, {"value", 1.5}}), {2}, {1.5, 1.5});
  expectValues(runOp("arange", {}, {{"end", Dim(4)}}), {4}, {0, 1, 2, 3});
}

TEST(Kernels, DropoutIsSeededAndScaled) {
  Tensor x(DType::F64, {10000});
  for (auto& v : x.data) v = 1.0;
  expectValues(runOp("dropout", {t({2}, {1, 2})}, {{"p", 0.0}}), {2}, {1, 2});
  expectValues(runOp("dropout", {t({2}, {1, 2})}, {{"p", 0.9}, {"training", false}}), {2}, {1, 2});
  Tensor a = runOp("dropout", {x}, {{"p", 0.25}, {"seed", int64_t{7}}});
  Tensor b = runOp("dropout", {x}, {{"p", 0.25}, {"seed", int64_t{7}}});
  Tensor c = runOp("dropout", {x}, {{"p", 0.25}, {"seed", int64_t{8}}});
  EXPECT_EQ(a.data, b.data);
  EXPECT_NE(a.data, c.data);
  int zeros = 0;
  for (double v : a.data) {
    EXPECT_TRUE(v == 0.0 || std::fabs(v - 1.0 / 0.75) < 1e-12);
    zeros += v == 0.0;
  }
  EXPECT_NEAR(zeros / 10000.0, 0.25, 0.02);
}

TEST(Kernels, Reductions) {
  Tensor x = t({2, 3}, {1, 2, 3, 4, 5, 6});
  expectValues(runOp("sum", {x}), {}, {21});
  expectValues(runOp("sum", {x}, {{"dim", Ints{1}}}), {2}, {6, 15});
  expectValues(runOp("mean", {x}, {{"dim", Ints{0}}, {"keepdim", true}}), {1, 3}, {2.5, 3.5, 4.5});
  expectValues(runOp("amax", {x}, {{"dim", Ints{1}}}), {2}, {3, 6});
  expectValues(runOp("amin", {x}, {{"dim", Ints{0}}}), {3}, {1, 2, 3});
  expectValues(runOp("prod", {x}, {{"dim", Ints{1}}}), {2}, {6, 120});
  expectValues(runOp("prod", {t({2, 2}, {-1, 0.5, 3, -2})}), {}, {3});
  expectValues(runOp("softmax", {t({3}, {1, 2, 3})}), {3}, {0.09003057317038046, 0.24472847105479767, 0.6652409557748219});
  expectValues(runOp("log_softmax", {t({1, 3}, {1, 2, 3})}), {1, 3}, {-2.40760596444438, -1.4076059644443801, -0.4076059644443803});
  // softmax along dim 0 of a [3, 1] column is the same distribution.
  expectValues(runOp("softmax", {t({3, 1}, {1, 2, 3})}, {{"dim", int64_t{0}}}), {3, 1},
               {0.09003057317038046, 0.24472847105479767, 0.6652409557748219});
  // Large logits must not overflow (max subtraction).
  expectValues(runOp("softmax", {t({2}, {1000, 1000})}), {2}, {0.5, 0.5});
}

TEST(Kernels, MatmulFamily) {
  Tensor a = t({2, 2}, {1, 2, 3, 4}), b = t({2, 2}, {5, 6, 7, 8});
  expectValues(runOp("matmul", {a, b}), {2, 2}, {19, 22, 43, 50});
  expectValues(runOp("matmul", {t({2}, {1, 2}), t({2}, {3, 4})}), {}, {11});
  expectValues(runOp("matmul", {a, t({2}, {1, 1})}), {2}, {3, 7});
  // Batch broadcasting: [2, 1, 2] @ [2, 1] -> [2, 1, 1].
  expectValues(runOp("matmul", {t({2, 1, 2}, {1, 2, 3, 4}), t({2, 1}, {1, 10})}), {2, 1, 1}, {21, 43});
  expectValues(runOp("bmm", {t({2, 1, 2}, {1, 2, 3, 4}), t({2, 2, 1}, {1, 1, 2, 2})}), {2, 1, 1}, {3, 14});
  Tensor x = t({1, 2}, {1, 2}), w = t({3, 2}, {1, 0, 0, 1, 1, 1}), bias = t({3}, {0.5, 0, -1});
  expectValues(runOp("linear", {x, w, bias}), {1, 3}, {1.5, 2, 2});
  expectValues(runOp("linear", {x, w}), {1, 3}, {1, 2, 3});
}

TEST(Kernels, Normalization) {
  Tensor x = t({1, 4}, {1, 2, 3, 4});
  expectValues(runOp("layer_norm", {x}, {{"normalized_shape", Ints{4}}}), {1, 4},
               {-1.3416354199689269, -0.447211806656309, 0.447211806656309, 1.3416354199689269}, 1e-9);
  expectValues(runOp("layer_norm", {x, t({4}, {2, 2, 2, 2}), t({4}, {1, 1, 1, 1})}, {{"normalized_shape", Ints{4}}}), {1, 4},
               {1 - 2 * 1.3416354199689269, 1 - 2 * 0.447211806656309, 1 + 2 * 0.447211806656309, 1 + 2 * 1.3416354199689269},
               1e-9);
  // Inference: running statistics.
  expectValues(runOp("batch_norm", {t({1, 2, 1, 1}, {1, 2}), t({2}, {1, 2}), t({2}, {0, 1}), t({2}, {0, 1}), t({2}, {1, 4})},
                     {{"eps", 0.0}}),
               {1, 2, 1, 1}, {1, 2});
  // Training: batch statistics (mean 2, biased variance 1), running stats ignored.
  expectValues(runOp("batch_norm", {t({2, 1, 1, 1}, {1, 3}), t({1}, {1}), t({1}, {0}), t({1}, {100}), t({1}, {100})},
                     {{"training", true}, {"eps", 0.0}}),
               {2, 1, 1, 1}, {-1, 1});
}

TEST(Kernels, ConvolutionAndPooling) {
  Tensor x = t({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor ones = t({1, 1, 2, 2}, {1, 1, 1, 1});
  expectValues(runOp("conv2d", {x, ones}), {1, 1, 2, 2}, {12, 16, 24, 28});
  expectValues(runOp("conv2d", {x, ones, t({1}, {1})}, {{"padding", Ints{1}}, {"stride", Ints{2}}}), {1, 1, 2, 2},
               {2, 6, 12, 29});
  // Dilation 2 with a 2x2 kernel touches the corners.
  expectValues(runOp("conv2d", {x, ones}, {{"dilation", Ints{2}}}), {1, 1, 1, 1}, {20});
  // Groups: each output channel sees only its own input channel.
  Tensor x2 = t({1, 2, 1, 1}, {3, 5}), w2 = t({2, 1, 1, 1}, {2, 10});
  expectValues(runOp("conv2d", {x2, w2}, {{"groups", int64_t{2}}}), {1, 2, 1, 1}, {6, 50});

  V v16;
  for (int i = 1; i <= 16; ++i) v16.push_back(i);
  Tensor x4 = t({1, 1, 4, 4}, v16);
  expectValues(runOp("max_pool2d", {x4}, {{"kernel_size", Ints{2}}}), {1, 1, 2, 2}, {6, 8, 14, 16});
  expectValues(runOp("avg_pool2d", {x4}, {{"kernel_size", Ints{2}}}), {1, 1, 2, 2}, {3.5, 5.5, 11.5, 13.5});
  // Padding: max ignores padded cells, avg counts them as zeros (count_include_pad).
  expectValues(runOp("max_pool2d", {x}, {{"kernel_size", Ints{2}}, {"stride", Ints{2}}, {"padding", Ints{1}}}), {1, 1, 2, 2},
               {1, 3, 7, 9});
  expectValues(runOp("avg_pool2d", {x}, {{"kernel_size", Ints{2}}, {"stride", Ints{2}}, {"padding", Ints{1}}}), {1, 1, 2, 2},
               {0.25, 1.25, 2.75, 7.0});
  expectValues(runOp("adaptive_avg_pool2d", {x4}, {{"output_size", Ints{1}}}), {1, 1, 1, 1}, {8.5});
  expectValues(runOp("adaptive_avg_pool2d", {x}, {{"output_size", Ints{2, 2}}}), {1, 1, 2, 2}, {3, 4, 6, 7});
}

TEST(Kernels, EmbeddingAndLosses) {
  Tensor w = t({3, 2}, {0, 1, 2, 3, 4, 5});
  expectValues(runOp("embedding", {t({2}, {2, 0}, DType::I64), w}), {2, 2}, {4, 5, 0, 1});
  test::expectThrowContaining<Error>([&] { runOp("embedding", {t({1}, {3}, DType::I64), w}); },
                                     "index 3 is out of range for an embedding of 3 rows");
  expectValues(runOp("cross_entropy", {t({1, 2}, {0, 0}), t({1}, {1}, DType::I64)}), {}, {0.6931471805599453});
  expectValues(runOp("cross_entropy", {t({2, 3}, {1, 2, 3, 0, 0, 0}), t({2}, {0, 2}, DType::I64)}), {},
               {(2.40760596444438 + std::log(3.0)) / 2});
  test::expectThrowContaining<Error>([&] { runOp("cross_entropy", {t({1, 2}, {0, 0}), t({1}, {5}, DType::I64)}); },
                                     "target 5 is out of range for 2 classes");
  expectValues(runOp("mse_loss", {t({2}, {1, 2}), t({2}, {3, 2})}), {}, {2});
}

TEST(Kernels, ViewsAndLayout) {
  Tensor x = t({2, 3}, {1, 2, 3, 4, 5, 6});
  expectValues(runOp("reshape", {x}, {{"shape", Ints{3, -1}}}), {3, 2}, {1, 2, 3, 4, 5, 6});
  expectValues(runOp("view", {x}, {{"shape", Ints{6}}}), {6}, {1, 2, 3, 4, 5, 6});
  expectValues(runOp("permute", {x}, {{"dims", Ints{1, 0}}}), {3, 2}, {1, 4, 2, 5, 3, 6});
  expectValues(runOp("transpose", {t({1, 2, 2}, {1, 2, 3, 4})}, {{"dim0", int64_t{1}}, {"dim1", int64_t{2}}}), {1, 2, 2},
               {1, 3, 2, 4});
  expectValues(runOp("expand", {t({2, 1}, {7, 8})}, {{"shape", Ints{2, 2, 3}}}), {2, 2, 3},
               {7, 7, 7, 8, 8, 8, 7, 7, 7, 8, 8, 8});
  expectValues(runOp("slice", {x}, {{"dim", int64_t{1}}, {"start", int64_t{0}}, {"end", int64_t{3}}, {"step", int64_t{2}}}),
               {2, 2}, {1, 3, 4, 6});
  expectValues(runOp("slice", {x}, {{"dim", int64_t{1}}, {"start", int64_t{-1}}}), {2, 1}, {3, 6});
  expectValues(runOp("cat", {x, t({2, 1}, {9, 10})}, {{"dim", int64_t{1}}}), {2, 4}, {1, 2, 3, 9, 4, 5, 6, 10});
  expectValues(runOp("cat", {x, t({1, 3}, {7, 8, 9})}, {{"dim", int64_t{0}}}), {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST(Kernels, BackwardOps) {
  Tensor ones22 = t({1, 1, 2, 2}, {1, 1, 1, 1});
  expectValues(runOp("conv2d_backward_input", {ones22, ones22}, {{"input_shape", Ints{1, 1, 3, 3}}}), {1, 1, 3, 3},
               {1, 2, 1, 2, 4, 2, 1, 2, 1});
  Tensor x = t({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expectValues(runOp("conv2d_backward_weight", {x, ones22}, {{"weight_shape", Ints{1, 1, 2, 2}}}), {1, 1, 2, 2},
               {12, 16, 24, 28});
  V v16;
  for (int i = 1; i <= 16; ++i) v16.push_back(i);
  Tensor g = t({1, 1, 2, 2}, {1, 2, 3, 4});
  expectValues(runOp("max_pool2d_backward", {g, t({1, 1, 4, 4}, v16)}, {{"kernel_size", Ints{2}}}), {1, 1, 4, 4},
               {0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4});
  expectValues(runOp("avg_pool2d_backward", {t({1, 1, 1, 1}, {4})}, {{"input_shape", Ints{1, 1, 2, 2}}, {"kernel_size", Ints{2}}}),
               {1, 1, 2, 2}, {1, 1, 1, 1});
  expectValues(runOp("adaptive_avg_pool2d_backward", {t({1, 1, 1, 1}, {8})}, {{"input_shape", Ints{1, 1, 2, 2}}}), {1, 1, 2, 2},
               {2, 2, 2, 2});
  expectValues(runOp("embedding_backward", {t({3, 2}, {1, 2, 3, 4, 5, 6}), t({3}, {1, 0, 1}, DType::I64)},
                     {{"num_weights", int64_t{3}}}),
               {3, 2}, {3, 4, 6, 8, 0, 0});
  expectValues(runOp("slice_backward", {t({1, 2}, {7, 8})},
                     {{"input_shape", Ints{1, 4}}, {"dim", int64_t{1}}, {"start", int64_t{1}}, {"step", int64_t{2}}}),
               {1, 4}, {0, 7, 0, 8});
  expectValues(runOp("sym_size", {}, {{"size", Dim(5)}}), {}, {5});
}

// Prims that are not plain aliases of a torch op's kernel.
TEST(Kernels, PrimsWithTheirOwnKernels) {
  expectValues(runOp("prims.broadcast_in_dim", {t({2}, {1, 2})}, {{"shape", Ints{2, 3}}, {"broadcast_dimensions", Ints{0}}}),
               {2, 3}, {1, 1, 1, 2, 2, 2});
  expectValues(runOp("prims.pad", {t({2}, {1, 2})}, {{"dim", int64_t{0}}, {"low", int64_t{1}}, {"high", int64_t{2}}, {"interior", int64_t{1}}}),
               {6}, {0, 1, 0, 2, 0, 0});
  expectValues(runOp("prims.sum", {t({2, 3}, {1, 2, 3, 4, 5, 6})}, {{"dims", Ints{1}}}), {2}, {6, 15});
  expectValues(runOp("prims.gather", {t({2, 3}, {1, 2, 3, 4, 5, 6}), t({2, 1}, {2, 0}, DType::I64)}, {{"dim", int64_t{1}}}),
               {2, 1}, {3, 4});
  expectValues(runOp("prims.index_select", {t({3, 2}, {0, 1, 2, 3, 4, 5}), t({2}, {2, 2}, DType::I64)}, {{"dim", int64_t{0}}}),
               {2, 2}, {4, 5, 4, 5});
  expectValues(runOp("prims.index_add", {t({3}, {1, 1, 1}), t({3}, {2, 0, 2}, DType::I64), t({3}, {10, 20, 30})},
                     {{"dim", int64_t{0}}}),
               {3}, {21, 1, 41});
  Tensor u = runOp("prims.uniform_random", {}, {{"shape", Ints{1000}}, {"seed", int64_t{3}}});
  double mean = 0;
  for (double v : u.data) {
    EXPECT_TRUE(v >= 0 && v < 1);
    mean += v / 1000;
  }
  EXPECT_NEAR(mean, 0.5, 0.05);
  test::expectThrowContaining<ShapeError>([] { runOp("prims.add", {t({2}, {1, 2}), t({}, {1})}); },
                                          "prims need equal shapes (broadcast explicitly)");
}

// Runs last (gtest keeps declaration order within a file): every registry op was exercised above
// and every op has a kernel.
TEST(Kernels, ZzEveryRegistryOpIsTested) {
  for (const OpSchema& s : OpRegistry::instance().all()) EXPECT_TRUE(kernelTable().count(s.name)) << "no kernel for " << s.name;
  for (const OpSchema* s : OpRegistry::instance().torchOps())
    EXPECT_TRUE(testedOps().count(s->name)) << "no hand-computed test for " << s->name;
}

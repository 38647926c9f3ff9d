#include <gtest/gtest.h>

#include <cmath>

#include "core/interp/interpreter.h"
#include "core/runtime/model_runner.h"
#include "test_util.h"

using namespace fusebox;

namespace {
const char* kHalfModel = R"(
model halfsum(x: f16[1000]) {
  return sum(x * 1.001)
}
)";
}

TEST(Interpreter, NativePrecisionRoundsEveryOpFloat64DoesNot) {
  Graph g = test::traceSource(kHalfModel);
  Tensor x(DType::F16, {1000});
  for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = roundToDType(0.1 + 0.001 * i, DType::F16);
  Tensor native = interpret(g, {x}, Precision::Native)[0];
  Tensor exact = interpret(g, {x}, Precision::Float64)[0];
  EXPECT_EQ(native.data[0], roundToDType(native.data[0], DType::F16));  // representable in f16
  EXPECT_NE(native.data[0], exact.data[0]);
  EXPECT_NEAR(native.data[0], exact.data[0], std::fabs(exact.data[0]) * 1e-3);
}

TEST(Interpreter, RejectsWrongInputs) {
  Graph g = test::traceSource(kHalfModel);
  test::expectThrowContaining<Error>([&] { interpret(g, {}); }, "takes 1 inputs, got 0");
  test::expectThrowContaining<Error>([&] { interpret(g, {Tensor(DType::F16, {999})}); },
                                     "input 'x' expects f16[1000], got f16[999]");
}

TEST(Interpreter, SymbolicGraphsMustBeBoundBeforeRunning) {
  Graph g = test::traceSource("model m(x: f32[B, 3]) dims(B = 2) { return relu(x) }", TraceOptions{{}, true});
  test::expectThrowContaining<Error>([&] { makeInputs(g, 0); }, "bind its dims (e.g. --dim B=8)");
}

TEST(Interpreter, MakeInputsIsDeterministicSeededAndNotZero) {
  Graph g = test::traceSource(R"(
model m(x: f32[64, 8], y: i64[64] range(3, 7)) {
  param w: f32[8, 8] = randn(seed=5, std=2)
  param u: f32[8] = uniform(seed=6, low=1, high=2)
  return linear(x, w, u)
})");
  std::vector<Tensor> a = makeInputs(g, 1), b = makeInputs(g, 1), c = makeInputs(g, 2);
  ASSERT_EQ(a.size(), 4u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].data, b[i].data);
  EXPECT_NE(a[0].data, c[0].data);  // inputs follow the run seed
  EXPECT_EQ(a[2].data, c[2].data);  // params do not
  double sumSq = 0;
  for (double v : a[0].data) sumSq += v * v;
  EXPECT_NEAR(sumSq / a[0].numel(), 1.0, 0.25);  // standard normal
  for (double v : a[1].data) {
    EXPECT_GE(v, 3);
    EXPECT_LT(v, 7);
    EXPECT_EQ(v, std::floor(v));
  }
  double sq = 0;
  for (double v : a[2].data) sq += v * v;
  EXPECT_NEAR(std::sqrt(sq / a[2].numel()), 2.0, 0.6);
  for (double v : a[3].data) EXPECT_TRUE(v >= 1 && v < 2);
  EXPECT_NE(a[0].data, std::vector<double>(a[0].data.size(), a[0].data[0]));
}

TEST(TensorComparison, NaNWhereNaNIsExpectedMatchesAndInfDoesNotLoosenTheTolerance) {
  Tensor want(DType::F32, {3}, {NAN, 1.0, INFINITY});
  Tensor same(DType::F32, {3}, {NAN, 1.0, INFINITY});
  EXPECT_TRUE(allClose(same, want, 1e-6, 1e-6));
  EXPECT_EQ(compareTensors(same, want).maxAbs, 0);
  Tensor numberForNaN(DType::F32, {3}, {0.0, 1.0, INFINITY});
  EXPECT_FALSE(allClose(numberForNaN, want, 1e-6, 1e-6));
  // An expected inf elsewhere in the tensor must not make a wrong finite value pass.
  Tensor wrong(DType::F32, {3}, {NAN, 5.0, INFINITY});
  EXPECT_FALSE(closeForDType(wrong, want));
  EXPECT_TRUE(closeForDType(same, want));
}

#include <gtest/gtest.h>

#include "core/ir/shape.h"
#include "core/ops/shape_rules.h"
#include "test_util.h"

using namespace fusebox;

TEST(Dim, SymbolicArithmetic) {
  Dim b = Dim::symbol("B"), t = Dim::symbol("T");
  EXPECT_EQ((b * t).str(), "B*T");
  EXPECT_EQ((Dim(2) * b).str(), "2*B");
  EXPECT_EQ((b * t * Dim(768)).dividedBy(b * t)->str(), "768");
  EXPECT_FALSE(b.dividedBy(t).has_value());
  EXPECT_FALSE(Dim(7).dividedBy(Dim(2)).has_value());
  EXPECT_EQ(b.plus(b)->str(), "2*B");
  EXPECT_FALSE(b.plus(Dim(1)).has_value());
  EXPECT_EQ((b * t).substitute({{"B", 4}}).str(), "4*T");
  EXPECT_EQ((b * t).substitute({{"B", 4}, {"T", 8}}), Dim(32));
}

TEST(Shape, NumelAndPrinting) {
  Shape s{Dim::symbol("B"), Dim(784)};
  EXPECT_EQ(shapeStr(s), "[B, 784]");
  EXPECT_EQ(numel(s).str(), "784*B");
  EXPECT_FALSE(isConcrete(s));
  EXPECT_EQ(concreteSizes(Shape{Dim(2), Dim(3)}), (std::vector<int64_t>{2, 3}));
}

TEST(ShapeRules, Broadcast) {
  Dim b = Dim::symbol("B");
  EXPECT_EQ(broadcastShapes({b, 1, Dim(4)}, {Dim(3), Dim(1)}, "add"), (Shape{b, 3, 4}));
  EXPECT_EQ(broadcastShapes({}, {2, 3}, "add"), (Shape{2, 3}));
  test::expectThrowContaining<ShapeError>([&] { broadcastShapes({2, 3}, {4, 3}, "add"); },
                                          "add: shapes [2, 3] and [4, 3] do not broadcast");
  test::expectThrowContaining<ShapeError>([&] { broadcastShapes({b}, {Dim::symbol("T")}, "mul"); }, "B vs T");
}

TEST(ShapeRules, ReshapeInfersMinusOneSymbolically) {
  Dim b = Dim::symbol("B"), t = Dim::symbol("T");
  EXPECT_EQ(resolveReshape({b, t, 768}, {b * t, -1}, "reshape"), (Shape{b * t, 768}));
  EXPECT_EQ(resolveReshape({b, 16, 5, 5}, {b, -1}, "reshape"), (Shape{b, 400}));
  test::expectThrowContaining<ShapeError>([&] { resolveReshape({2, 3}, {4, 2}, "reshape"); },
                                          "cannot reshape [2, 3] (6 elements) into [4, 2] (8 elements)");
  test::expectThrowContaining<ShapeError>([&] { resolveReshape({2, 3}, {-1, -1}, "reshape"); }, "only one dimension can be -1");
}

TEST(ShapeRules, AxesAndWindows) {
  EXPECT_EQ(normalizeAxis(-1, 3, "x"), 2);
  test::expectThrowContaining<ShapeError>([] { normalizeAxis(3, 3, "softmax"); }, "dimension 3 is out of range");
  EXPECT_EQ(reductionAxes({}, 3, "sum"), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(reductionAxes({-1, 0}, 3, "sum"), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(windowOutputSize(28, 5, 1, 2, 1, "conv2d"), 28);
  EXPECT_EQ(windowOutputSize(28, 2, 2, 0, 1, "pool"), 14);
  test::expectThrowContaining<ShapeError>([] { windowOutputSize(2, 5, 1, 0, 1, "conv2d"); }, "too small");
}

TEST(Shape, ArithmeticOverflowIsAShapeErrorNotAWrap) {
  Dim big(int64_t{1} << 32);
  test::expectThrowContaining<ShapeError>([&] { (void)(big * big); }, "overflows int64");
  test::expectThrowContaining<ShapeError>([&] { (void)numel({big, big, 2}); }, "overflows int64");
  test::expectThrowContaining<ShapeError>([&] { (void)Dim(INT64_MAX).plus(Dim(1)); }, "overflows int64");
  test::expectThrowContaining<ShapeError>([&] { (void)(Dim::symbol("B") * big * big); }, "overflows int64");
  EXPECT_FALSE(Dim(INT64_MIN).dividedBy(Dim(-1)));
  EXPECT_EQ(numel({Dim(3037000499), Dim(3037000499)}), Dim(int64_t{3037000499} * 3037000499));
  test::expectThrowContaining<ShapeError>([] { windowOutputSize(8, 2, 1, int64_t{1} << 62, 1, "conv2d"); }, "overflows int64");
}

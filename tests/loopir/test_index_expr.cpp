#include <gtest/gtest.h>

#include "core/loopir/index_expr.h"

using namespace fusebox;

TEST(IndexExpr, CombinesLikeTermsAndFoldsConstants) {
  IndexExpr x = IndexExpr::var("x0", 8), y = IndexExpr::var("x1", 64);
  EXPECT_EQ((x * 64 + y + x * 2 - x * 2 + 3).str(), "64*x0 + x1 + 3");
  EXPECT_EQ((IndexExpr(4) * 5 - 20).str(), "0");
  EXPECT_EQ(IndexExpr::var("x2", 1).str(), "0");  // size-1 loops vanish
}

TEST(IndexExpr, DivModUseRanges) {
  IndexExpr m = IndexExpr::var("m", 16), k = IndexExpr::var("k", 768);
  IndexExpr p = m * 768 + k;
  EXPECT_EQ(p.floorDiv(768).str(), "m");
  EXPECT_EQ(p.mod(768).str(), "k");
  EXPECT_EQ(p.floorDiv(768).mod(16).str(), "m");
  // unflatten then relinearize is the identity
  std::vector<IndexExpr> idx = unflatten(p, {16, 12, 64});
  EXPECT_EQ(idx[0].str(), "m");
  EXPECT_EQ(idx[1].str(), "(k / 64)");
  EXPECT_EQ(idx[2].str(), "(k % 64)");
  EXPECT_EQ(linearIndex(idx, {768, 64, 1}).str(), "k + 768*m");
  // nested division folds
  EXPECT_EQ(k.floorDiv(4).floorDiv(8).str(), "(k / 32)");
  // a genuine remainder stays
  IndexExpr q = IndexExpr::var("q", 100);
  EXPECT_EQ(q.mod(7).str(), "(q % 7)");
  EXPECT_EQ(q.mod(7).maxValue(), 6);
}

// Div and Mod are floor operations. C's / and % truncate toward zero, so an operand that may be
// negative prints as the preludes' floor helpers: printed as C's, the index of a pad's unselected
// lane was -1 on the H200 (gpt2_block training at B=8, an illegal memory access).
TEST(IndexExpr, PossiblyNegativeOperandsPrintFloorHelpers) {
  IndexExpr k = IndexExpr::var("k", 2304), m = IndexExpr::var("m", 4096);
  IndexExpr shifted = k + m.mod(512) * 768 - 1536;
  EXPECT_EQ(shifted.floorDiv(393216).str(), "fb_floordiv(768*(m % 512) + k - 1536, 393216)");
  EXPECT_EQ((k - 100).mod(512).str(), "fb_floormod(k - 100, 512)");
  EXPECT_EQ(k.mod(512).str(), "(k % 512)");  // provably non-negative: C's operator
  IndexExpr x = IndexExpr::var("x", 10);
  for (int64_t v = 0; v < 10; ++v) {
    EXPECT_EQ((x - 7).floorDiv(3).evaluate({{"x", v}}), v - 7 >= 0 ? (v - 7) / 3 : -((7 - v + 2) / 3));
    EXPECT_EQ((x - 7).mod(3).evaluate({{"x", v}}), ((v - 7) % 3 + 3) % 3);
  }
}

TEST(IndexExpr, EvaluateAndSubstitute) {
  IndexExpr x = IndexExpr::var("x", 10), y = IndexExpr::var("y", 10);
  IndexExpr e = (x * 3 + y).floorDiv(2);
  for (int64_t a = 0; a < 10; ++a)
    for (int64_t b = 0; b < 10; ++b) EXPECT_EQ(e.evaluate({{"x", a}, {"y", b}}), (3 * a + b) / 2);
  IndexExpr s = (x * 3 + y).substitute({{"x", IndexExpr::var("m", 4)}, {"y", IndexExpr(1)}});
  EXPECT_EQ(s.str(), "3*m + 1");
  EXPECT_EQ(s.variables(), std::vector<std::string>{"m"});
}

#include <gtest/gtest.h>

#include <cmath>

#include "core/ir/dtype.h"

using namespace fusebox;

TEST(DType, NamesRoundTrip) {
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I64, DType::I32, DType::Bool})
    EXPECT_EQ(parseDType(dtypeName(t)), t);
  EXPECT_FALSE(parseDType("float").has_value());
  EXPECT_EQ(dtypeBytes(DType::BF16), 2);
  EXPECT_EQ(dtypeBytes(DType::I64), 8);
}

TEST(DType, RoundingMatchesHardwareFormats) {
  EXPECT_EQ(roundToDType(0.1, DType::F32), static_cast<double>(0.1f));
  EXPECT_EQ(roundToDType(0.1, DType::F64), 0.1);
  // binary16: 11 significant bits. 1 + 2^-11 is a tie between 1 and 1 + 2^-10: rounds to even (1).
  EXPECT_EQ(roundToDType(1.0 + std::ldexp(1.0, -11), DType::F16), 1.0);
  EXPECT_EQ(roundToDType(1.0 + 3 * std::ldexp(1.0, -11), DType::F16), 1.0 + std::ldexp(1.0, -9));
  EXPECT_EQ(roundToDType(65504.0, DType::F16), 65504.0);
  EXPECT_TRUE(std::isinf(roundToDType(70000.0, DType::F16)));
  EXPECT_EQ(roundToDType(std::ldexp(1.0, -24), DType::F16), std::ldexp(1.0, -24));  // smallest subnormal
  // bfloat16: 8 significant bits.
  EXPECT_EQ(roundToDType(1.0 + std::ldexp(1.0, -8), DType::BF16), 1.0);
  EXPECT_EQ(roundToDType(1.0 + 3 * std::ldexp(1.0, -8), DType::BF16), 1.0 + std::ldexp(1.0, -6));
  EXPECT_EQ(roundToDType(-2.7, DType::I64), -2.0);
  EXPECT_EQ(roundToDType(0.3, DType::Bool), 1.0);
}

#include <gtest/gtest.h>

#include <cmath>

#include "core/ir/dtype.h"
#include "core/ir/element_storage.h"

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

// The 16-bit patterns the runtimes copy f16/bf16 tensors through: every finite pattern decodes
// and encodes back to itself, and encoding rounds as roundToDType does.
TEST(ElementStorage, HalfBitPatternsRoundTrip) {
  for (DType t : {DType::F16, DType::BF16})
    for (uint32_t h = 0; h < 0x10000u; ++h) {
      double v = fromHalfBits(static_cast<uint16_t>(h), t);
      if (std::isnan(v)) continue;
      ASSERT_EQ(toHalfBits(v, t), h) << dtypeName(t) << " pattern " << h;
    }
  for (double v : {1.0 + std::ldexp(1.0, -11), 65519.0, 65520.0, 1e6, std::ldexp(3.0, -25), std::ldexp(1.0, -25), -0.1, 3.14159})
    for (DType t : {DType::F16, DType::BF16}) {
      double r = roundToDType(v, t);
      EXPECT_EQ(fromHalfBits(toHalfBits(v, t), t), r) << dtypeName(t) << " " << v;
    }
  EXPECT_EQ(toHalfBits(-0.0, DType::F16), 0x8000u);
  EXPECT_TRUE(std::isnan(fromHalfBits(toHalfBits(NAN, DType::BF16), DType::BF16)));
}

TEST(ElementStorage, EncodesAndDecodesEveryDType) {
  std::vector<double> values = {1.5, -2.0, 0.0, 7.0, -3.0};
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I64, DType::I32, DType::Bool}) {
    std::vector<unsigned char> bytes(values.size() * dtypeBytes(t));
    encodeElements(values, t, bytes.data());
    std::vector<double> back(values.size());
    decodeElements(bytes.data(), t, back);
    for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(back[i], roundToDType(values[i], t)) << dtypeName(t) << " " << i;
  }
}

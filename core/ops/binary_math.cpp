#include "core/ops/binary_math.h"

#include <cmath>

namespace fusebox {

const std::vector<BinaryMath>& binaryMathOps() {
  static const std::vector<BinaryMath> ops = {
#define FB_BINARY_MATH(Enum, name, summary, result, torchOp, floatOnly, value, infix, helper, libmF32, libmF64)                 \
  {BinaryOp::Enum, name, summary, BinaryMath::Result::result, torchOp, floatOnly,                                               \
   [](double a, double b) { return static_cast<double>(value); }, infix, helper, libmF32, libmF64},
#include "core/ops/binary_math.def"
#undef FB_BINARY_MATH
  };
  return ops;
}

const BinaryMath& binaryMath(BinaryOp op) { return binaryMathOps()[static_cast<size_t>(op)]; }

const BinaryMath* findBinaryMath(const std::string& name) {
  for (const BinaryMath& b : binaryMathOps())
    if (b.name == name) return &b;
  return nullptr;
}

std::string binaryMathExpr(const BinaryMath& op, const std::string& a, const std::string& b) {
  if (op.infix) return a + " " + op.infix + " " + b;
  return std::string(op.helper) + "(" + a + ", " + b + ")";
}

}  // namespace fusebox

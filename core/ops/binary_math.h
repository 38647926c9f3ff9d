// The elementwise binary ops (add, pow, maximum, eq, ...): one table (binary_math.def) that the
// registry, the prims, decomposition, lowering, both interpreters and the expression emitter
// read, so adding one is a row there, its derivative (core/autograd) and its test.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fusebox {

enum class BinaryOp : uint8_t {
#define FB_BINARY_MATH(Enum, ...) Enum,
#include "core/ops/binary_math.def"
#undef FB_BINARY_MATH
};

struct BinaryMath {
  enum class Result { SameAsInputs, Bool };  // arithmetic, or a comparison / logic op
  BinaryOp op;
  std::string name;
  std::string summary;
  Result result = Result::SameAsInputs;
  bool torchOp = true;     // a torch-level op and a prim; false: loop-IR only (pad's index masks)
  bool floatOnly = false;  // integers are rejected by shape inference
  double (*eval)(double, double);  // the reference value (interpreters); comparisons give 0 or 1
  const char* infix;       // the C/CUDA operator ("+"), or nullptr:
  const char* helper;      // the prelude function called instead ("fb_max")
  // A helper that is a plain libm call ("atan2f", "atan2"): the preludes' wrappers and the JIT's
  // symbol list are made from these (core/codegen/libm_helpers), so the row is all it needs.
  const char* libmF32 = nullptr;
  const char* libmF64 = nullptr;
};

// Every row, in BinaryOp order.
const std::vector<BinaryMath>& binaryMathOps();
const BinaryMath& binaryMath(BinaryOp op);
const BinaryMath* findBinaryMath(const std::string& name);
// The C/CUDA expression of `op` applied to two operand expressions.
std::string binaryMathExpr(const BinaryMath& op, const std::string& a, const std::string& b);

}  // namespace fusebox

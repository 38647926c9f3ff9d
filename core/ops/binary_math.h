// The elementwise binary ops (add, pow, maximum, eq, ...): one table that the registry, the
// prims, decomposition, lowering, both interpreters and the expression emitter read, so adding
// one is a row here, its derivative (core/autograd) and its test. A row whose C form is a call
// (`helper`) that is not a plain libm call also needs that function in the C++ and CUDA preludes.
#pragma once

#include <string>
#include <vector>

namespace fusebox {

struct BinaryMath {
  enum class Result { SameAsInputs, Bool };  // arithmetic, or a comparison / logic op
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

const std::vector<BinaryMath>& binaryMathOps();
const BinaryMath* findBinaryMath(const std::string& name);
// The C/CUDA expression of `op` applied to two operand expressions.
std::string binaryMathExpr(const BinaryMath& op, const std::string& a, const std::string& b);

}  // namespace fusebox

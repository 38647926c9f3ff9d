// The elementwise math functions that are both torch-level ops and prims (neg, exp, sin, ...):
// one table (unary_math.def) that the registry, the prims, decomposition, lowering, both
// interpreters and the expression emitter read, so adding a function is one row there, its
// derivative, and (unless its C form is spelled in the row) its fb_<name> in the preludes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fusebox {

enum class UnaryOp : uint8_t {
#define FB_UNARY_MATH(Enum, ...) Enum,
#include "core/ops/unary_math.def"
#undef FB_UNARY_MATH
};

struct UnaryMath {
  UnaryOp op;
  std::string name;
  std::string summary;
  bool floatOnly = true;   // integers are rejected by shape inference
  double (*eval)(double);  // the reference value (interpreters)
  const char* cForm;       // see unary_math.def; nullptr: fb_<name>(x)
  bool polynomial = false; // tens of instructions an element (see unary_math.def)
};

// Every row, in UnaryOp order.
const std::vector<UnaryMath>& unaryMathOps();
const UnaryMath& unaryMath(UnaryOp op);
const UnaryMath* findUnaryMath(const std::string& name);
// The C/CUDA expression of `op` applied to `x`; `one` is the literal 1 of the operand's dtype.
std::string unaryMathExpr(const UnaryMath& op, const std::string& x, const std::string& one);

}  // namespace fusebox

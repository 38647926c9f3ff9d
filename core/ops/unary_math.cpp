#include "core/ops/unary_math.h"

#include <cmath>

namespace fusebox {

const std::vector<UnaryMath>& unaryMathOps() {
  static const std::vector<UnaryMath> ops = {
#define FB_UNARY_MATH(Enum, name, summary, floatOnly, value, cForm, polynomial) \
  {UnaryOp::Enum, name, summary, floatOnly, [](double x) { return static_cast<double>(value); }, cForm, polynomial},
#include "core/ops/unary_math.def"
#undef FB_UNARY_MATH
  };
  return ops;
}

const UnaryMath& unaryMath(UnaryOp op) { return unaryMathOps()[static_cast<size_t>(op)]; }

const UnaryMath* findUnaryMath(const std::string& name) {
  for (const UnaryMath& u : unaryMathOps())
    if (u.name == name) return &u;
  return nullptr;
}

std::string unaryMathExpr(const UnaryMath& op, const std::string& x, const std::string& one) {
  if (!op.cForm) return "fb_" + op.name + "(" + x + ")";
  std::string out;
  for (const char* c = op.cForm; *c; ++c) {
    if (c[0] == '$' && c[1] == 'x') out += x, ++c;
    else if (c[0] == '$' && c[1] == '1') out += one, ++c;
    else out += *c;
  }
  return out;
}

}  // namespace fusebox

#include "core/ops/binary_math.h"

#include <cmath>

namespace fusebox {

namespace {
using R = BinaryMath::Result;
double truth(bool b) { return b ? 1.0 : 0.0; }
}  // namespace

const std::vector<BinaryMath>& binaryMathOps() {
  // NaN propagates through maximum/minimum as torch's does (the C helpers fb_max/fb_min agree).
  static const std::vector<BinaryMath> ops = {
      {"add", "a + b (broadcasting)", R::SameAsInputs, true, false, [](double a, double b) { return a + b; }, "+", nullptr},
      {"sub", "a - b (broadcasting)", R::SameAsInputs, true, false, [](double a, double b) { return a - b; }, "-", nullptr},
      {"mul", "a * b (broadcasting)", R::SameAsInputs, true, false, [](double a, double b) { return a * b; }, "*", nullptr},
      {"div", "a / b (broadcasting)", R::SameAsInputs, true, false, [](double a, double b) { return a / b; }, "/", nullptr},
      {"pow", "a ^ b (broadcasting)", R::SameAsInputs, true, false, [](double a, double b) { return std::pow(a, b); }, nullptr, "fb_pow"},
      {"maximum", "elementwise max(a, b)", R::SameAsInputs, true, false,
       [](double a, double b) { return std::isnan(a) || a > b ? a : b; }, nullptr, "fb_max"},
      {"minimum", "elementwise min(a, b)", R::SameAsInputs, true, false,
       [](double a, double b) { return std::isnan(a) || a < b ? a : b; }, nullptr, "fb_min"},
      {"atan2", "atan2(a, b): the angle of the point (b, a)", R::SameAsInputs, true, true,
       [](double a, double b) { return std::atan2(a, b); }, nullptr, "fb_atan2", "atan2f", "atan2"},
      {"eq", "a == b", R::Bool, true, false, [](double a, double b) { return truth(a == b); }, "==", nullptr},
      {"ne", "a != b", R::Bool, true, false, [](double a, double b) { return truth(a != b); }, "!=", nullptr},
      {"lt", "a < b", R::Bool, true, false, [](double a, double b) { return truth(a < b); }, "<", nullptr},
      {"le", "a <= b", R::Bool, true, false, [](double a, double b) { return truth(a <= b); }, "<=", nullptr},
      {"gt", "a > b", R::Bool, true, false, [](double a, double b) { return truth(a > b); }, ">", nullptr},
      {"ge", "a >= b", R::Bool, true, false, [](double a, double b) { return truth(a >= b); }, ">=", nullptr},
      {"and", "logical and", R::Bool, false, false, [](double a, double b) { return truth(a != 0 && b != 0); }, "&&", nullptr},
      {"or", "logical or", R::Bool, false, false, [](double a, double b) { return truth(a != 0 || b != 0); }, "||", nullptr},
  };
  return ops;
}

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

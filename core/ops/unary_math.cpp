#include "core/ops/unary_math.h"

#include <cmath>

namespace fusebox {

const std::vector<UnaryMath>& unaryMathOps() {
  static const std::vector<UnaryMath> ops = {
      {"neg", "-x", false, [](double x) { return -x; }},
      {"abs", "|x|", false, [](double x) { return std::fabs(x); }},
      {"exp", "e^x", true, [](double x) { return std::exp(x); }},
      {"log", "natural logarithm", true, [](double x) { return std::log(x); }},
      {"tanh", "hyperbolic tangent", true, [](double x) { return std::tanh(x); }},
      {"sqrt", "square root", true, [](double x) { return std::sqrt(x); }},
      {"rsqrt", "1 / sqrt(x)", true, [](double x) { return 1.0 / std::sqrt(x); }},
      {"erf", "Gauss error function", true, [](double x) { return std::erf(x); }},
      {"sin", "sine", true, [](double x) { return std::sin(x); }},
      {"cos", "cosine", true, [](double x) { return std::cos(x); }},
      {"atan", "arc tangent", true, [](double x) { return std::atan(x); }},
      {"floor", "largest integer <= x", true, [](double x) { return std::floor(x); }},
      {"round", "nearest integer, halves to even", true, [](double x) { return std::nearbyint(x); }},
  };
  return ops;
}

const UnaryMath* findUnaryMath(const std::string& name) {
  for (const UnaryMath& u : unaryMathOps())
    if (u.name == name) return &u;
  return nullptr;
}

}  // namespace fusebox

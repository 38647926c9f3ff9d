// The elementwise math functions that are both torch-level ops and prims (neg, exp, sin, ...):
// one table that the registry, the prims, decomposition, lowering and both interpreters read,
// so adding a function is one entry here, its derivative, and its fb_<name> in the C++ and CUDA
// preludes.
#pragma once

#include <string>
#include <vector>

namespace fusebox {

struct UnaryMath {
  std::string name;
  std::string summary;
  bool floatOnly = true;   // integers are rejected by shape inference
  double (*eval)(double);  // the reference value (interpreters)
};

const std::vector<UnaryMath>& unaryMathOps();
const UnaryMath* findUnaryMath(const std::string& name);

}  // namespace fusebox

// A model computing in f16 and bf16 (mixed with f32: casts both ways, a broadcast weight, a sum
// and a max over each dim), shared by the CPU and CUDA backend tests.
#pragma once

#include <string>

namespace fusebox::test {

inline std::string halfPrecisionSource(int rows, int cols) {
  std::string r = std::to_string(rows), c = std::to_string(cols);
  return "model half(x: f16[" + r + ", " + c + "], y: bf16[" + c + "]) {\n  param w: f16[" + c +
         "] = uniform(seed=3, low=0.5, high=1.5)\n"
         "  a = exp(x) * w + to(to(y, dtype=\"f32\") * 3.0, dtype=\"f16\")\n"
         "  b = to(a, dtype=\"bf16\") * y\n"
         "  return sum(a, dim=1), b, to(b, dtype=\"f32\"), amax(a, dim=0)\n}\n";
}

}  // namespace fusebox::test

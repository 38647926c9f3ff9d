// Models at the edges of what the backends take, shared by the CPU and CUDA backend tests.
#pragma once

#include <string>

namespace fusebox::test {

// Computes in f16 and bf16, mixed with f32: casts both ways, a broadcast weight, a sum and a max
// over each dim.
inline std::string halfPrecisionSource(int rows, int cols) {
  std::string r = std::to_string(rows), c = std::to_string(cols);
  return "model half(x: f16[" + r + ", " + c + "], y: bf16[" + c + "]) {\n  param w: f16[" + c +
         "] = uniform(seed=3, low=0.5, high=1.5)\n"
         "  a = exp(x) * w + to(to(y, dtype=\"f32\") * 3.0, dtype=\"f16\")\n"
         "  b = to(a, dtype=\"bf16\") * y\n"
         "  return sum(a, dim=1), b, to(b, dtype=\"f32\"), amax(a, dim=0)\n}\n";
}

// Zero-size tensors: an empty input and an empty param (a dim of 0), consumed by ops whose results
// are empty (a scaled copy), partly empty (cat) or not empty at all (a sum over the empty dim, a
// matmul contracting over it).
inline std::string zeroSizeSource() {
  return "model zero_size(x: f32[0, 3], y: f32[2, 3]) {\n"
         "  param w: f32[3, 4] = uniform(seed=3, low=-1.0, high=1.0)\n"
         "  param e: f32[0, 4] = uniform(seed=4, low=-1.0, high=1.0)\n"
         "  a = cat([y, x * 2.0], dim=0)\n"
         "  h = matmul(a, w) + sum(sum(x, dim=0))\n"
         "  k = matmul(transpose(x, 0, 1), e)\n"
         "  return h, cat([e, h], dim=0), k, sum(e * 3.0), amax(x, dim=0)\n}\n";
}

}  // namespace fusebox::test

// Model sources for the bounded-work tests (what bench/gen_scale_models.py writes, smaller):
// long chains, paths that rejoin, random DAGs, long view chains and wide concatenations. Values
// stay within [-1, 1] so long models still compare meaningfully with the interpreter.
#pragma once

#include <cstdint>
#include <string>

namespace fusebox::test {

inline std::string scaleHeader(const std::string& name, const std::string& params = "") {
  return "model " + name + "(x: f32[4, 8]) {\n  param w: f32[8] = uniform(seed=1, low=0.5, high=1.0)\n" + params +
         "  h0 = tanh(x * w)\n";
}

// n pointwise ops, each reading the previous value.
inline std::string chainSource(int n) {
  static const char* const ops[] = {"tanh", "sigmoid", "sin", "cos"};
  std::string s = scaleHeader("chain");
  for (int i = 1; i < n; ++i) {
    std::string prev = "h" + std::to_string(i - 1), cur = "h" + std::to_string(i);
    s += "  " + cur + " = " + (i % 3 ? std::string(ops[i % 4]) + "(" + prev + ")" : prev + " * 0.9") + "\n";
  }
  return s + "  return h" + std::to_string(n - 1) + "\n}\n";
}

// h_i from h_{i-1} and h_{i-2}: every value reaches the output along exponentially many paths.
inline std::string diamondSource(int n) {
  std::string s = scaleHeader("diamond") + "  h1 = sin(h0)\n";
  for (int i = 2; i < n; ++i) {
    std::string a = "h" + std::to_string(i - 1), b = "h" + std::to_string(i - 2);
    s += "  h" + std::to_string(i) + " = " + (i % 2 ? "(" + a + " + " + b + ") * 0.5" : a + " * " + b) + "\n";
  }
  return s + "  return h" + std::to_string(n - 1) + "\n}\n";
}

// About n ops; each statement reads the previous value and up to two earlier ones (a
// deterministic LCG picks them): unary and binary pointwise ops, a few row means and matmuls.
inline std::string dagSource(int n, uint32_t seed = 7) {
  uint32_t state = seed;
  auto next = [&](uint32_t mod) {
    state = state * 1664525u + 1013904223u;
    return (state >> 8) % mod;
  };
  std::string s = scaleHeader("dag", "  param m: f32[8, 8] = randn(seed=2, std=0.3)\n");
  int i = 0;
  for (int ops = 2; ops < n;) {
    ++i;
    auto v = [](int k) { return "h" + std::to_string(k); };
    std::string a = v(i - 1);
    auto pick = [&] { return v(next(4) ? std::max(0, i - 1 - static_cast<int>(next(8))) : static_cast<int>(next(i))); };
    uint32_t r = next(100);
    std::string e;
    if (r < 1) e = "tanh(matmul(" + a + ", m))", ops += 2;
    else if (r < 2) e = "tanh(" + a + " - mean(" + pick() + ", [1], keepdim=true))", ops += 3;
    else if (r < 35) e = std::string(r % 2 ? "sin" : "tanh") + "(" + a + ")", ops += 1;
    else if (r < 55) e = a + " * " + pick(), ops += 1;
    else if (r < 70) e = std::string(r % 2 ? "maximum" : "minimum") + "(" + a + ", " + pick() + ")", ops += 1;
    else if (r < 85) e = "(" + a + " + " + pick() + ") * 0.5", ops += 2;
    else e = a + " * " + pick() + " * " + pick(), ops += 2;
    s += "  " + v(i) + " = " + e + "\n";
  }
  return s + "  return h" + std::to_string(i) + "\n}\n";
}

// n views in a row (reshapes and transposes), a pointwise op every tenth.
inline std::string viewChainSource(int n) {
  std::string s = scaleHeader("views");
  for (int i = 1; i < n; ++i) {
    std::string prev = "h" + std::to_string(i - 1);
    std::string e = i % 10 == 0 ? "sin(" + prev + ")"
                    : i % 2    ? "reshape(" + prev + ", [8, 4])"
                               : "transpose(reshape(" + prev + ", [8, 4]), 0, 1)";
    s += "  h" + std::to_string(i) + " = " + e + "\n";
  }
  return s + "  return h" + std::to_string(n - 1) + "\n}\n";
}

// cat of `parts` inputs along dim 0: every row of x sliced out, each transformed.
inline std::string concatSource(int parts) {
  std::string s = "model wide(x: f32[" + std::to_string(parts) + ", 8]) {\n  h = tanh(x)\n  return sin(cat([";
  for (int k = 0; k < parts; ++k)
    s += (k ? ", " : "") + std::string(k % 3 ? "slice(h, 0, " : "cos(slice(h, 0, ") + std::to_string(k) + ", " + std::to_string(k + 1) +
         (k % 3 ? ")" : "))");
  return s + "], 0))\n}\n";
}

}  // namespace fusebox::test

#include "core/codegen/libm_helpers.h"

#include "core/ops/binary_math.h"

namespace fusebox {

namespace {

// One wrapper per precision: `prefix` float fb_x(float a, float b) { return xf(a, b); }
std::string wrappers(const char* prefix) {
  std::string out;
  for (const BinaryMath& b : binaryMathOps()) {
    if (!b.libmF32 || !b.helper) continue;
    for (auto [type, fn] : {std::pair{"float", b.libmF32}, std::pair{"double", b.libmF64}})
      out += std::string(prefix) + type + " " + b.helper + "(" + type + " a, " + type + " b) { return " + fn + "(a, b); }\n";
  }
  return out;
}

}  // namespace

std::string cpuLibmHelpers() {
  std::string decls;
  for (const BinaryMath& b : binaryMathOps())
    if (b.libmF32)
      decls += std::string("extern \"C\" FB_LIBM float ") + b.libmF32 + "(float, float);\nextern \"C\" FB_LIBM double " + b.libmF64 +
               "(double, double);\n";
  return decls + wrappers("static inline ");
}

std::string cudaLibmHelpers() { return wrappers("__device__ __forceinline__ "); }

std::vector<std::string> tableLibmSymbols() {
  std::vector<std::string> out;
  for (const BinaryMath& b : binaryMathOps())
    if (b.libmF32) out.insert(out.end(), {b.libmF32, b.libmF64});
  return out;
}

}  // namespace fusebox

#include "core/ir/dtype.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace fusebox {

std::string_view dtypeName(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::F64: return "f64";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::I64: return "i64";
    case DType::I32: return "i32";
    case DType::Bool: return "bool";
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view name) {
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I64, DType::I32, DType::Bool})
    if (dtypeName(t) == name) return t;
  return std::nullopt;
}

int dtypeBytes(DType t) {
  switch (t) {
    case DType::F64:
    case DType::I64: return 8;
    case DType::F32:
    case DType::I32: return 4;
    case DType::F16:
    case DType::BF16: return 2;
    case DType::Bool: return 1;
  }
  return 0;
}

bool isFloating(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16;
}
bool isInteger(DType t) { return t == DType::I64 || t == DType::I32; }

// IEEE binary16 round-to-nearest-even from a float, back to float.
static float roundToHalf(float f) {
  if (std::isnan(f) || std::isinf(f)) return f;
  float a = std::fabs(f);
  if (a >= 65520.0f) return std::copysign(INFINITY, f);  // rounds past the largest half (65504)
  if (a < std::ldexp(1.0f, -25)) return std::copysign(0.0f, f);
  int exp;
  std::frexp(a, &exp);  // a = m * 2^exp, m in [0.5, 1)
  // Half has 11 significant bits for normals; subnormals have a fixed quantum of 2^-24.
  int quantumExp = std::max(exp - 11, -24);
  float q = std::ldexp(1.0f, quantumExp);
  float r = std::nearbyint(a / q) * q;  // default FP rounding mode is nearest-even
  return std::copysign(r, f);
}

static float roundToBF16(float f) {
  if (std::isnan(f)) return f;
  uint32_t bits = std::bit_cast<uint32_t>(f);
  uint32_t lsb = (bits >> 16) & 1u;
  bits += 0x7FFFu + lsb;
  bits &= 0xFFFF0000u;
  return std::bit_cast<float>(bits);
}

double roundToDType(double v, DType t) {
  switch (t) {
    case DType::F64: return v;
    case DType::F32: return static_cast<double>(static_cast<float>(v));
    case DType::F16: return roundToHalf(static_cast<float>(v));
    case DType::BF16: return roundToBF16(static_cast<float>(v));
    case DType::I64:
    case DType::I32: return std::isfinite(v) ? std::trunc(v) : 0.0;
    case DType::Bool: return v != 0.0 ? 1.0 : 0.0;
  }
  return v;
}

}  // namespace fusebox

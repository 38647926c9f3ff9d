#include "core/ir/element_storage.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace fusebox {

uint16_t toHalfBits(double v, DType t) {
  float f = static_cast<float>(roundToDType(v, t));  // exactly representable from here on
  uint32_t x = std::bit_cast<uint32_t>(f);
  if (t == DType::BF16) return static_cast<uint16_t>(std::isnan(f) ? (x >> 16) | 0x40u : x >> 16);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  float a = std::fabs(f);
  if (std::isnan(f)) return sign | 0x7E00u;
  if (std::isinf(f)) return sign | 0x7C00u;
  if (a < std::ldexp(1.0f, -14)) return sign | static_cast<uint16_t>(a * 16777216.0f);  // subnormal: units of 2^-24
  int exp;
  float m = std::frexp(a, &exp);  // a = m * 2^exp, m in [0.5, 1)
  uint16_t mant = static_cast<uint16_t>((m * 2.0f - 1.0f) * 1024.0f);
  return sign | static_cast<uint16_t>((exp - 1 + 15) << 10) | mant;
}

double fromHalfBits(uint16_t h, DType t) {
  if (t == DType::BF16) return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
  uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0) return (sign ? -1 : 1) * std::ldexp(static_cast<double>(man), -24);
  if (exp == 31) return man ? NAN : (sign ? -INFINITY : INFINITY);
  return std::bit_cast<float>((sign << 31) | ((exp + 112) << 23) | (man << 13));
}

namespace {

template <class T>
void encodeAs(const std::vector<double>& values, void* dst, T (*convert)(double)) {
  T* out = static_cast<T*>(dst);
  for (size_t i = 0; i < values.size(); ++i) out[i] = convert(values[i]);
}

template <class T>
void decodeAs(const void* src, std::vector<double>& out) {
  const T* in = static_cast<const T*>(src);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(in[i]);
}

}  // namespace

void encodeElements(const std::vector<double>& values, DType t, void* dst) {
  switch (t) {
    case DType::F32: return encodeAs<float>(values, dst, [](double v) { return static_cast<float>(v); });
    case DType::F64: return encodeAs<double>(values, dst, [](double v) { return v; });
    case DType::I64: return encodeAs<int64_t>(values, dst, [](double v) { return static_cast<int64_t>(v); });
    case DType::I32: return encodeAs<int32_t>(values, dst, [](double v) { return static_cast<int32_t>(v); });
    case DType::Bool: return encodeAs<bool>(values, dst, [](double v) { return v != 0; });
    case DType::F16: return encodeAs<uint16_t>(values, dst, [](double v) { return toHalfBits(v, DType::F16); });
    case DType::BF16: return encodeAs<uint16_t>(values, dst, [](double v) { return toHalfBits(v, DType::BF16); });
  }
}

void decodeElements(const void* src, DType t, std::vector<double>& out) {
  switch (t) {
    case DType::F32: return decodeAs<float>(src, out);
    case DType::F64: return decodeAs<double>(src, out);
    case DType::I64: return decodeAs<int64_t>(src, out);
    case DType::I32: return decodeAs<int32_t>(src, out);
    case DType::Bool: return decodeAs<bool>(src, out);
    case DType::F16:
    case DType::BF16: {
      const uint16_t* in = static_cast<const uint16_t*>(src);
      for (size_t i = 0; i < out.size(); ++i) out[i] = fromHalfBits(in[i], t);
      return;
    }
  }
}

}  // namespace fusebox

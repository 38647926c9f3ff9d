// Overflow-checked int64 arithmetic for sizes that come from user input (model dims, --dim,
// ONNX dims and initializers). Every shape product goes through these: an overflow is reported,
// never wrapped.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace fusebox {

inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The element count of `sizes` when no dim is negative and the count is at most `limit`
// (computed without overflow, whatever the input says).
std::optional<int64_t> numelWithin(const std::vector<int64_t>& sizes, int64_t limit = INT64_MAX);

// Bytes of `numel` elements of `elementBytes` each, or nullopt when that overflows int64.
inline std::optional<int64_t> bytesOf(int64_t numel, int64_t elementBytes) { return checkedMul(numel, elementBytes); }

}  // namespace fusebox

// Element types of tensors in every stage of the pipeline.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace fusebox {

enum class DType : uint8_t { F32, F64, F16, BF16, I64, I32, Bool };

std::string_view dtypeName(DType t);  // "f32", "i64", ...
std::optional<DType> parseDType(std::string_view name);
int dtypeBytes(DType t);
bool isFloating(DType t);
bool isInteger(DType t);  // i32, i64 (not bool)

// Rounds a double to the nearest value representable in `t` (round-to-nearest-even for floats,
// truncation toward zero for integers, 0/1 for bool). The interpreter uses this to compute in a
// graph's dtype while storing doubles.
double roundToDType(double v, DType t);

}  // namespace fusebox

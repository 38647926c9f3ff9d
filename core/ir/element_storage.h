// Elements as compiled code stores them: f32/f64/i64/i32/bool as their C types, f16 and bf16 as
// their 16-bit patterns (computed in f32 by the generated code, as Inductor does). The CPU and
// CUDA runtimes copy tensors (values held as doubles) in and out through these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/ir/dtype.h"

namespace fusebox {

// The 16-bit pattern of `v` rounded to f16 or bf16 (nearest even; overflow to inf, NaN kept).
uint16_t toHalfBits(double v, DType t);
double fromHalfBits(uint16_t bits, DType t);

// Writes values.size() elements of type `t` to dst (dtypeBytes(t) each).
void encodeElements(const std::vector<double>& values, DType t, void* dst);
// Reads out.size() elements of type `t` from src.
void decodeElements(const void* src, DType t, std::vector<double>& out);

}  // namespace fusebox

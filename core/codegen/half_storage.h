// f16 and bf16 in generated code: stored as 16-bit patterns (fb_f16, fb_bf16), computed in f32 as
// Inductor does. A load converts up exactly; a store, and a cast to the type, round to nearest
// even. The same text serves both preludes; each defines FB_F32_BITS(f) and FB_BITS_F32(u)
// (a float's bits and back) first.
#pragma once

#include <string>

namespace fusebox {

// `fn` qualifies free functions ("static inline", "__device__ __forceinline__"), `member` the
// storage types' members ("", "__device__ __forceinline__").
std::string halfStorageHelpers(const char* fn, const char* member);

}  // namespace fusebox

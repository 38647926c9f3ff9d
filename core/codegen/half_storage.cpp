#include "core/codegen/half_storage.h"

namespace fusebox {

std::string halfStorageHelpers(const char* fn, const char* member) {
  std::string f = std::string(fn) + " ", m = std::string(member) + (*member ? " " : "");
  return "// f16/bf16 storage: 16-bit patterns, computed in f32; stores and casts round to nearest even.\n" + f +
         R"(float fb_f16_to_f32(unsigned short h) {
  unsigned int s = (unsigned int)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 0x1Fu) return FB_BITS_F32(s | 0x7F800000u | (m << 13));
  if (e == 0) { float v = (float)m * 5.9604644775390625e-8f; return s ? -v : v; }  // subnormal: m * 2^-24
  return FB_BITS_F32(s | ((e + 112u) << 23) | (m << 13));
}
)" + f + R"(unsigned short fb_f32_to_f16(float f) {
  unsigned int x = FB_F32_BITS(f), s = (x >> 16) & 0x8000u, a = x & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return (unsigned short)(s | 0x7E00u);            // NaN
  if (a >= 0x477FF000u) return (unsigned short)(s | 0x7C00u);           // 65520 and up round to inf
  if (a < 0x33000000u) return (unsigned short)s;                        // below 2^-25: zero
  if (a < 0x38800000u) {                                                // subnormal: units of 2^-24
    unsigned int sig = (a & 0x7FFFFFu) | 0x800000u, shift = 126u - (a >> 23);
    unsigned int q = sig >> shift, rem = sig & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    q += (rem > half || (rem == half && (q & 1u))) ? 1u : 0u;
    return (unsigned short)(s | q);
  }
  unsigned int r = a - 0x38000000u;  // exponent rebiased from 127 to 15
  r += 0xFFFu + ((r >> 13) & 1u);
  return (unsigned short)(s | (r >> 13));
}
)" + f + R"(float fb_bf16_to_f32(unsigned short h) { return FB_BITS_F32((unsigned int)h << 16); }
)" + f + R"(unsigned short fb_f32_to_bf16(float f) {
  unsigned int x = FB_F32_BITS(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (unsigned short)((x >> 16) | 0x40u);  // NaN stays NaN
  return (unsigned short)((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}
)" + f + "float fb_round_f16(float x) { return fb_f16_to_f32(fb_f32_to_f16(x)); }\n" + f +
         "float fb_round_bf16(float x) { return fb_bf16_to_f32(fb_f32_to_bf16(x)); }\n" +
         "struct fb_f16 {\n  unsigned short bits;\n  fb_f16() = default;\n  " + m +
         "fb_f16(float f) : bits(fb_f32_to_f16(f)) {}\n  " + m + "operator float() const { return fb_f16_to_f32(bits); }\n};\n" +
         "struct fb_bf16 {\n  unsigned short bits;\n  fb_bf16() = default;\n  " + m +
         "fb_bf16(float f) : bits(fb_f32_to_bf16(f)) {}\n  " + m + "operator float() const { return fb_bf16_to_f32(bits); }\n};\n";
}

}  // namespace fusebox

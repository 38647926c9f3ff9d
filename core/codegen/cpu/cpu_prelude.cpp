// The fixed part of every generated CPU module: types, math helpers, the runtime interface the
// wrapper calls, and the extern kernels (matmul, convolution, pooling, scatter-add). It is
// compiled together with the generated kernels, for the host CPU.
#include "core/codegen/cpu/cpu_prelude.h"

#include "core/codegen/cpu/cpu_blocked_conv.h"

#include <string>
#include <vector>

#include "core/codegen/half_storage.h"
#include "core/codegen/libm_helpers.h"

namespace fusebox {

const char* cpuPrelude() {
#ifdef FUSEBOX_HAS_OPENBLAS
#define FB_BLAS_LINE "#define FB_HAVE_CBLAS 1\n"
#else
#define FB_BLAS_LINE "#define FB_HAVE_CBLAS 0\n"
#endif
  static const std::string text = FB_BLAS_LINE R"PRELUDE(// ---- Fusebox CPU prelude -------------------------------------------------
typedef long fb_i64;
typedef unsigned long fb_u64;
// The JIT compiles most of these as opaque calls (-fno-builtin-*, jit_compiler.cpp); `const` tells
// LLVM they read no memory, so a call on a loop-invariant value may still leave its loop.
#define FB_LIBM __attribute__((const, nothrow))
extern "C" {
FB_LIBM float expf(float); FB_LIBM float logf(float); FB_LIBM float tanhf(float); FB_LIBM float erff(float);
FB_LIBM float powf(float, float); FB_LIBM double exp(double); FB_LIBM double log(double); FB_LIBM double tanh(double);
FB_LIBM double erf(double); FB_LIBM double pow(double, double); FB_LIBM float sinf(float); FB_LIBM float cosf(float);
FB_LIBM float atanf(float); FB_LIBM double sin(double); FB_LIBM double cos(double); FB_LIBM double atan(double);
}
// Branch-free float exp/tanh/erf so that loops calling them vectorize (libm calls do not).
// exp: Cephes range reduction and polynomial, ~1 ulp; exact 0 below the denormal range.
static inline float fb_exp(float x) {
  float c = x > 88.3762626647949f ? 88.3762626647949f : (x < -87.3365447504f ? -87.3365447504f : x);
  float n = __builtin_floorf(c * 1.44269504088896341f + 0.5f);
  float r = c - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500E-4f;
  p = p * r + 1.3981999507E-3f;
  p = p * r + 8.3334519073E-3f;
  p = p * r + 4.1665795894E-2f;
  p = p * r + 1.6666665459E-1f;
  p = p * r + 5.0000001201E-1f;
  p = p * r * r + r + 1.0f;
  float scale = __builtin_bit_cast(float, ((int)n + 127) << 23);
  float y = p * scale;
  y = x > 88.3762626647949f ? __builtin_inff() : y;
  y = x < -87.3365447504f ? 0.0f : y;
  return x != x ? x : y;
}
static inline double fb_exp(double x) { return exp(x); }
static inline float fb_log(float x) { return logf(x); }
static inline double fb_log(double x) { return log(x); }
// tanh: Cephes polynomial near 0, 1 - 2 / (e^2x + 1) elsewhere, exactly +-1 beyond 9.1.
static inline float fb_tanh(float x) {
  float a = __builtin_fabsf(x);
  float z = x * x;
  float small = ((((-5.70498872745E-3f * z + 2.06390887954E-2f) * z - 5.37397155531E-2f) * z + 1.33314422036E-1f) * z -
                 3.33332819422E-1f) * z * x + x;
  // Exactly +-1 where tanhf rounds to it (|x| > 9.01): clamping at 9 left 0.99999994, and a
  // saturated tanh's gradient 1 - t^2 was 1.2e-7 instead of 0.
  float big = a > 9.1f ? 1.0f : 1.0f - 2.0f / (fb_exp(2.0f * a) + 1.0f);
  big = x < 0 ? -big : big;
  return a < 0.625f ? small : big;
}
static inline double fb_tanh(double x) { return tanh(x); }
// erf: Abramowitz-Stegun 7.1.26 (absolute error < 1.5e-7).
static inline float fb_erf(float x) {
  float a = __builtin_fabsf(x);
  float t = 1.0f / (1.0f + 0.3275911f * a);
  float poly = ((((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t - 0.284496736f) * t + 0.254829592f) * t;
  float y = 1.0f - poly * fb_exp(-a * a);
  return x < 0 ? -y : y;
}
static inline double fb_erf(double x) { return erf(x); }
static inline float fb_pow(float x, float y) { return powf(x, y); }
static inline double fb_pow(double x, double y) { return pow(x, y); }
// Integer pow, exact (a double pow may be an ulp off, which truncation turns into an off-by-one):
// square-and-multiply with wrapping products; a negative power is 0 unless |x| is 1.
static inline fb_i64 fb_pow(fb_i64 x, fb_i64 y) {
  if (y < 0) return x == 1 ? 1 : x == -1 ? ((y & 1) ? -1 : 1) : 0;
  fb_u64 r = 1, b = (fb_u64)x;
  for (; y; y >>= 1, b *= b)
    if (y & 1) r *= b;
  return (fb_i64)r;
}
static inline int fb_pow(int x, int y) { return (int)fb_pow((fb_i64)x, (fb_i64)y); }
static inline float fb_sin(float x) { return sinf(x); }
static inline double fb_sin(double x) { return sin(x); }
static inline float fb_cos(float x) { return cosf(x); }
static inline double fb_cos(double x) { return cos(x); }
static inline float fb_atan(float x) { return atanf(x); }
static inline double fb_atan(double x) { return atan(x); }
static inline float fb_floor(float x) { return __builtin_floorf(x); }
static inline double fb_floor(double x) { return __builtin_floor(x); }
static inline float fb_round(float x) { return __builtin_rintf(x); }  // halves to even in the default rounding mode
static inline double fb_round(double x) { return __builtin_rint(x); }
static inline float fb_sqrt(float x) { return __builtin_sqrtf(x); }
static inline double fb_sqrt(double x) { return __builtin_sqrt(x); }
static inline float fb_abs(float x) { return __builtin_fabsf(x); }
static inline double fb_abs(double x) { return __builtin_fabs(x); }
template <class T> static inline T fb_abs(T x) { return x < 0 ? -x : x; }
template <class T> static inline T fb_max(T a, T b) { return (a != a || a > b) ? a : b; }
template <class T> static inline T fb_min(T a, T b) { return (a != a || a < b) ? a : b; }
template <class T> static inline T fb_mul(T a, T b) { return a * b; }
// Floor division and modulo by a positive constant, for index operands that may be negative.
template <class T, class U> static inline T fb_floordiv(T a, U d) { return a / (T)d - (T)((a % (T)d != 0) & (a < 0)); }
template <class T, class U> static inline T fb_floormod(T a, U d) { T r = a % (T)d; return r < 0 ? r + (T)d : r; }
)PRELUDE" + cpuLibmHelpers() +
                                  "#define FB_F32_BITS(f) __builtin_bit_cast(unsigned int, f)\n#define FB_BITS_F32(u) __builtin_bit_cast(float, u)\n" +
                                  halfStorageHelpers("static inline", "") + R"PRELUDE(// Counter-based uniform [0, 1), bit-identical to the reference interpreter's dropout stream.
static inline fb_u64 fb_splitmix(fb_u64 x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
static inline double fb_rand(fb_u64 seed, fb_u64 index) {
  return (double)(fb_splitmix(fb_splitmix(seed) ^ index) >> 11) * 0x1.0p-53;
}

// Index faults: a data-dependent index outside its dimension is never used to address memory.
// The first fault of a run is kept (node id + 1, the index, the dimension's size) and the host
// turns it into an error naming the node; the faulting read uses index 0 meanwhile.
#ifdef FB_RUNTIME_LIBRARY
extern "C" { extern fb_i64 fusebox_fault[3]; }  // the module's own, in the same JIT dylib
#else
extern "C" { fb_i64 fusebox_fault[3]; }
#endif
static void fb_index_fault(fb_i64 i, fb_i64 n, fb_i64 site) {
  fb_i64 none = 0;
  if (__atomic_compare_exchange_n(&fusebox_fault[0], &none, site + 1, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    fusebox_fault[1] = i, fusebox_fault[2] = n;
}
static inline fb_i64 fb_check_index(fb_i64 i, fb_i64 n, fb_i64 site) {
  if (__builtin_expect((fb_u64)i < (fb_u64)n, 1)) return i;
  fb_index_fault(i, n, site);
  return 0;
}

// What the host gives the wrapper: launch runs fn over [0, rows) in parallel chunks and times it
// as kernel `kernel`.
struct FuseboxRuntime {
  void* ctx;
  void (*launch)(void* ctx, int kernel, void (*fn)(fb_i64 begin, fb_i64 end, void* data), fb_i64 rows, void* data);
  fb_i64 (*threads)(void* ctx, int kernel);  // how many threads a launch of this kernel runs on
  // How many times the host has written `buffer`, a module input it sets (a model's weights);
  // -1 for any other buffer (kernels write it, or it is another module's output read in place):
  // what a kernel keys a cache of a transformed input on, in its own scratch.
  fb_i64 (*version)(void* ctx, const void* buffer);
};

// ---- the externs: what the kernels call, compiled once per machine -------------------
// Their bodies are the runtime library (cpuRuntimeLibrary): one object compiled once, cached with
// the kernels' objects and linked beside every module, so a model's compile is its kernels only.
// C[b] (n x m) = op(A[b]) (n x k) @ op(B[b]) (k x m); op transposes the last two dims.
struct FbMatmul {
  const float* A; const float* B; float* C;
  fb_i64 batch, n, k, m;
  int transA, transB;
};
struct FbConv {
  const float* x; const float* w; float* y;  // roles swap for the gradients, see below
  fb_i64 N, C, H, W, O, KH, KW, OH, OW, groups, sh, sw, ph, pw, dh, dw;
  // The forward's epilogue (core/schedule/conv_epilogue.h), applied as outputs are stored:
  // y = act((conv + bias[o]) + res), each part only where set; act: min(max(v, lo), hi) or, with
  // silu, v * (1 / (exp(-v) + 1)).
  const float* bias; const float* res; int lower, upper; float lo, hi; int silu;
  // The forward's sums in the interpreter's order (a training graph's, see Schedule::trainingGraph):
  // no Winograd.
  int exact;
  // Channel-blocked image and output (core/codegen/cpu/channel_blocking.h); the residual is
  // laid out as the output. Only fb_conv_blocked reads these.
  int xBlocked, yBlocked;
};
struct FbPool {
  const float* x; const float* g; float* y;
  fb_i64 planes, H, W, OH, OW, kh, kw, sh, sw, ph, pw;
  int mode;  // 0 max, 1 avg (count_include_pad), 2 adaptive avg; +10: gradient
};
extern "C" void fb_matmul(const FuseboxRuntime* rt, int kernel, FbMatmul p, float* scratch);
extern "C" void fb_conv_rows(fb_i64 begin, fb_i64 end, void* data);             // rows: (n, o)
extern "C" void fb_conv_input_grad_rows(fb_i64 begin, fb_i64 end, void* data);  // rows: (n, c)
extern "C" void fb_conv_weight_grad_rows(fb_i64 begin, fb_i64 end, void* data); // rows: (o, c)
#if FB_HAVE_CBLAS
extern "C" void fb_conv_gemm(const FuseboxRuntime* rt, int kernel, FbConv c, int mode, float* scratch);
#endif
extern "C" void fb_conv_blocked(const FuseboxRuntime* rt, int kernel, FbConv c, float* scratch);
extern "C" void fb_pool_rows(fb_i64 begin, fb_i64 end, void* data);
extern "C" void fb_index_add(const float* x, const fb_i64* index, const float* src, float* out, fb_i64 outer, fb_i64 rows,
                             fb_i64 n, fb_i64 inner, fb_i64 site);
// ---- end of prelude -------------------------------------------------------------
)PRELUDE";
  return text.c_str();
}

const char* cpuRuntimeLibrary() {
  static const std::string text = "#define FB_RUNTIME_LIBRARY 1\n" + std::string(cpuPrelude()) + R"LIBRARY(
// ---- extern: matmul ---------------------------------------------------------
static void fb_matmul_rows(fb_i64 begin, fb_i64 end, void* data) {
  const FbMatmul& p = *(const FbMatmul*)data;
  const fb_i64 TJ = 256;
  // Row blocks of 4: each B row loaded once feeds 4 accumulator rows.
  for (fb_i64 blk = begin; blk < end; ++blk) {
    fb_i64 b = blk / ((p.n + 3) / 4), i0 = (blk % ((p.n + 3) / 4)) * 4;
    fb_i64 rows = p.n - i0 < 4 ? p.n - i0 : 4;
    const float* A = p.A + b * p.n * p.k;
    const float* B = p.B + b * p.k * p.m;
    float* C = p.C + b * p.n * p.m;
    for (fb_i64 j0 = 0; j0 < p.m; j0 += TJ) {
      fb_i64 cols = p.m - j0 < TJ ? p.m - j0 : TJ;
      float acc[4][TJ];
      for (int r = 0; r < 4; ++r)
        for (fb_i64 j = 0; j < TJ; ++j) acc[r][j] = 0.0f;
      for (fb_i64 kk = 0; kk < p.k; ++kk) {
        float a[4];
        for (int r = 0; r < 4; ++r)
          a[r] = r < rows ? (p.transA ? A[kk * p.n + i0 + r] : A[(i0 + r) * p.k + kk]) : 0.0f;
        if (!p.transB) {
          const float* __restrict brow = B + kk * p.m + j0;
          for (fb_i64 j = 0; j < cols; ++j) {
            float bv = brow[j];
            acc[0][j] += a[0] * bv; acc[1][j] += a[1] * bv; acc[2][j] += a[2] * bv; acc[3][j] += a[3] * bv;
          }
        } else {
          for (fb_i64 j = 0; j < cols; ++j) {
            float bv = B[(j0 + j) * p.k + kk];
            acc[0][j] += a[0] * bv; acc[1][j] += a[1] * bv; acc[2][j] += a[2] * bv; acc[3][j] += a[3] * bv;
          }
        }
      }
      for (fb_i64 r = 0; r < rows; ++r)
        for (fb_i64 j = 0; j < cols; ++j) C[(i0 + r) * p.m + j0 + j] = acc[r][j];
    }
  }
}
struct FbTranspose { const float* src; float* dst; fb_i64 batch, rows, cols; };
static void fb_transpose_rows(fb_i64 begin, fb_i64 end, void* data) {
  const FbTranspose& t = *(const FbTranspose*)data;
  for (fb_i64 bi = begin; bi < end; ++bi) {
    fb_i64 b = bi / t.cols, c = bi % t.cols;
    const float* s = t.src + b * t.rows * t.cols;
    float* d = t.dst + b * t.rows * t.cols + c * t.rows;
    for (fb_i64 r = 0; r < t.rows; ++r) d[r] = s[r * t.cols + c];
  }
}
#if FB_HAVE_CBLAS
extern "C" void cblas_sgemm(int order, int transA, int transB, int M, int N, int K, float alpha, const float* A, int lda,
                            const float* B, int ldb, float beta, float* C, int ldc);
// C (M x N, row-major, leading dim ldc) = op(A) @ op(B), split over the pool into one piece of
// rows of C (or of columns, when N > M) per thread, each a single-threaded sgemm (OpenBLAS runs
// with one thread: the pool is the only one waking threads, and it waits passively). One call per
// thread: every call packs its slice of A and all of B again, and small pieces spent a third of
// the GEMM time packing (resnet18).
struct FbGemm { int ta, tb; fb_i64 M, N, K; const float* A; fb_i64 lda; const float* B; fb_i64 ldb; float* C; fb_i64 ldc; };
struct FbGemmPieces { FbGemm g; fb_i64 piece; };  // rows (or columns) of C per launch row
static void fb_gemm_blocks(fb_i64 begin, fb_i64 end, void* data) {
  const FbGemm& g = ((const FbGemmPieces*)data)->g;
  fb_i64 piece = ((const FbGemmPieces*)data)->piece;
  bool byRows = g.M >= g.N;
  fb_i64 lo = begin * piece, hi = end * piece, dim = byRows ? g.M : g.N;
  if (hi > dim) hi = dim;
  if (hi <= lo) return;
  const float* A = g.A; const float* B = g.B; float* C = g.C;
  fb_i64 M = g.M, N = g.N;
  if (byRows) { A += g.ta ? lo : lo * g.lda; C += lo * g.ldc; M = hi - lo; }
  else { B += g.tb ? lo * g.ldb : lo; C += lo; N = hi - lo; }
  cblas_sgemm(101, g.ta ? 112 : 111, g.tb ? 112 : 111, (int)M, (int)N, (int)g.K, 1.0f, A, (int)g.lda, B, (int)g.ldb, 0.0f, C,
              (int)g.ldc);
}
static void fb_gemm(const FuseboxRuntime* rt, int kernel, FbGemm g) {
  fb_i64 dim = g.M >= g.N ? g.M : g.N, threads = rt->threads(rt->ctx, kernel);
  fb_i64 piece = ((dim + threads - 1) / threads + 15) / 16 * 16;  // whole vector registers of OpenBLAS's micro-kernel
  FbGemmPieces pieces{g, piece};
  rt->launch(rt->ctx, kernel, fb_gemm_blocks, (dim + piece - 1) / piece, &pieces);
}
#endif
static void fb_conv_direct(const FuseboxRuntime* rt, int kernel, const FbConv& c, float* scratch);
static void fb_gemv(const FuseboxRuntime* rt, int kernel, const FbMatmul& p);
// Batched C[b] = A[b] B[b] (B in rows): each batch a 1x1 direct convolution of the image B[b] by
// the weights A[b] read in place (m >= 16 columns, so no copy), run whole on one thread, the
// batches split over the threads. Attention's q k^T and p v (T5, 4 heads of 64x32x64) ran at
// 24 GFLOP/s in the row loop (fb_matmul_rows keeps its accumulators in memory).
static void fb_inline_launch(void*, int, void (*fn)(fb_i64, fb_i64, void*), fb_i64 rows, void* data) { fn(0, rows, data); }
static fb_i64 fb_one_thread(void*, int) { return 1; }
static fb_i64 fb_no_version(void*, const void*) { return -1; }
static void fb_matmul_batch_rows(fb_i64 begin, fb_i64 end, void* data) {
  const FbMatmul& p = *(const FbMatmul*)data;
  const FuseboxRuntime serial{0, fb_inline_launch, fb_one_thread, fb_no_version};
  for (fb_i64 b = begin; b < end; ++b) {
    FbConv c{p.B + b * p.k * p.m, p.A + b * p.n * p.k, p.C + b * p.n * p.m, 1, p.k, 1, p.m, p.n, 1, 1, 1, p.m, 1, 1, 1, 0, 0, 1, 1};
    fb_conv_direct(&serial, 0, c, 0);  // in place: no scratch
  }
}
extern "C" void fb_matmul(const FuseboxRuntime* rt, int kernel, FbMatmul p, float* scratch) {
  if (p.batch == 1 && p.n == 1 && p.transB) {  // one row by a transposed weight: a linear layer's head
    fb_gemv(rt, kernel, p);
    return;
  }
  // C = A B is a 1x1 convolution of the image B (k channels of m positions) by the weights A
  // (n output channels): the direct convolution's register tiles (8 rows of A by 16-48 columns
  // of B, from one contiguous copy of B) beat sgemm with its packing by 5-20% on ConvNeXt's and
  // the transformers' shapes. cpp_codegen.cpp sizes the scratch for this copy.
  if (p.batch == 1 && !p.transA && !p.transB) {
    FbConv c{p.B, p.A, p.C, 1, p.k, 1, p.m, p.n, 1, 1, 1, p.m, 1, 1, 1, 0, 0, 1, 1};
    fb_conv_direct(rt, kernel, c, scratch);
    return;
  }
#if FB_HAVE_CBLAS
  if (p.batch == 1) {  // single matmuls: OpenBLAS (bench/matmul.sh: about 3x the blocked kernel)
    fb_gemm(rt, kernel, FbGemm{p.transA, p.transB, p.n, p.m, p.k, p.A, p.transA ? p.n : p.k, p.B, p.transB ? p.k : p.m, p.C, p.m});
    return;
  }
#endif
  if (p.transB) {  // B^T is read column-wise: transpose it once into contiguous rows
    FbTranspose t{p.B, scratch, p.batch, p.m, p.k};
    rt->launch(rt->ctx, kernel, fb_transpose_rows, p.batch * p.k, &t);
    p.B = scratch;
    p.transB = 0;
  }
  // 16 columns: a tile fits them (kFbConvLanes, below, is 16 or 8). A single A^T (no BLAS) stays
  // on the row loop: the scratch holds A^T only for batches (cpp_codegen.cpp mirrors this).
  if (p.m >= 16 && (!p.transA || p.batch > 1)) {
    if (p.transA) {  // A^T into rows too, after B's copy
      float* at = scratch + (p.B == scratch ? p.batch * p.k * p.m : 0);
      FbTranspose t{p.A, at, p.batch, p.k, p.n};
      rt->launch(rt->ctx, kernel, fb_transpose_rows, p.batch * p.n, &t);  // rows (b, column of A)
      p.A = at;
      p.transA = 0;
    }
    rt->launch(rt->ctx, kernel, fb_matmul_batch_rows, p.batch, &p);
    return;
  }
  rt->launch(rt->ctx, kernel, fb_matmul_rows, p.batch * ((p.n + 3) / 4), &p);
}

// ---- extern: convolution and its gradients (NCHW, direct loops) -----------------------
// The output columns ow whose input column ow*s - p + kw*d lies in [0, W): a bound-check-free
// (and so vectorizable) inner loop.
static inline void fb_valid_cols(fb_i64 kw, fb_i64 W, fb_i64 OW, fb_i64 s, fb_i64 p, fb_i64 d, fb_i64& lo, fb_i64& hi) {
  fb_i64 off = kw * d - p;  // iw = ow*s + off
  lo = off >= 0 ? 0 : (-off + s - 1) / s;
  hi = W - off <= 0 ? 0 : (W - off + s - 1) / s;
  if (hi > OW) hi = OW;
  if (lo > hi) lo = hi;
}
typedef float fb_f8 __attribute__((ext_vector_type(8)));
// The direct and depthwise convolutions' vectors: 16 lanes where the host has AVX-512.
#if defined(__AVX512F__)
typedef float fb_cv __attribute__((ext_vector_type(16)));
typedef float fb_cvu __attribute__((ext_vector_type(16), aligned(4)));
typedef int fb_cvi __attribute__((ext_vector_type(16)));
static const int kFbConvLanes = 16, kFbConvRows = 8;  // 8 x 3 accumulators of the 32 registers
#else
typedef float fb_cv __attribute__((ext_vector_type(8)));
typedef float fb_cvu __attribute__((ext_vector_type(8), aligned(4)));
typedef int fb_cvi __attribute__((ext_vector_type(8)));
static const int kFbConvLanes = 8, kFbConvRows = 4;  // 4 x 3 of 16
#endif
#if defined(__AVX512F__)
typedef float fb_v16sf __attribute__((__vector_size__(64)));  // the AVX-512 builtins' type
#endif
// fb_max(v, acc) lane by lane: v where v is NaN or greater.
static inline fb_cv fb_max_lanes(fb_cv v, fb_cv acc) { return (v != v) | (v > acc) ? v : acc; }
// The first n lanes of p (n <= kFbConvLanes), the rest 0; no read past them.
static inline fb_cv fb_load_lanes(const float* p, fb_i64 n) {
  if (n == kFbConvLanes) return *(const fb_cvu*)p;
#if defined(__AVX512F__)
  return (fb_cv)__builtin_ia32_loadups512_mask(p, (fb_v16sf)(fb_cv)0.0f, (unsigned short)((1u << n) - 1));
#else
  fb_cv v = 0.0f;
  for (fb_i64 i = 0; i < n; ++i) v[i] = p[i];
  return v;
#endif
}
// Stores the first n lanes of v at p (n <= kFbConvLanes); no write past them.
static inline void fb_store_lanes(float* p, fb_cv v, fb_i64 n) {
  if (n == kFbConvLanes) {
    *(fb_cvu*)p = v;
    return;
  }
#if defined(__AVX512F__)
  __builtin_ia32_storeups512_mask(p, (fb_v16sf)v, (unsigned short)((1u << n) - 1));
#else
  for (fb_i64 i = 0; i < n; ++i) p[i] = v[i];
#endif
}
// One input row of W floats split by column stride phase: padded column t = iw + pw goes to phase
// t % s, position t / s; phase q's row starts at dst + q * phaseStride. Phase by phase, each a
// strided copy that LLVM vectorizes with shuffles for a constant stride (2: most strided
// convolutions and pools; 4: patchify stems). Stepping through the input column by column cost
// 5 cycles a float (a 14-wide row at stride 2: 64 cycles; 80% of a stride-2 depthwise layer).
template <int S>
static void fb_split_phases(const float* __restrict src, fb_i64 W, fb_i64 pw, fb_i64 s, float* __restrict dst, fb_i64 phaseStride,
                            fb_i64 phases) {
  const fb_i64 st = S > 0 ? S : s;
  for (fb_i64 q = 0; q < phases; ++q) {
    fb_i64 off = q - pw;  // position j of phase q is input column j * st + off
    fb_i64 lo = off >= 0 ? 0 : (-off + st - 1) / st, hi = W - off <= 0 ? 0 : (W - off + st - 1) / st;
    float* __restrict d = dst + q * phaseStride;
    for (fb_i64 j = lo; j < hi; ++j) d[j] = src[j * st + off];
  }
}
#if defined(__AVX512F__)
// Stride 2, both phases, 32 input columns at a time: two loads, the even and the odd columns
// picked by two permutes, one store per phase, the last piece masked. Even columns go to phase
// pw % 2 at position pw / 2 + m, odd ones to the other phase at pw / 2 + m + pw % 2. The strided
// copies run short rows (7-28 positions a phase) in their scalar remainder: 40 cycles a 14-wide row.
static void fb_split2_rows(const float* __restrict src, fb_i64 W, fb_i64 pw, float* __restrict dst, fb_i64 phaseStride) {
  fb_i64 a = pw % 2, base = pw / 2;
  float* __restrict even = dst + a * phaseStride + base;
  float* __restrict odd = dst + (1 - a) * phaseStride + base + a;
  for (fb_i64 c = 0; c < W; c += 32) {
    fb_i64 n = W - c < 32 ? W - c : 32;
    fb_cv lo = fb_load_lanes(src + c, n < 16 ? n : 16), hi = n > 16 ? fb_load_lanes(src + c + 16, n - 16) : (fb_cv)0.0f;
    fb_cv e = __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    fb_cv o = __builtin_shufflevector(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    fb_store_lanes(even + c / 2, e, (n + 1) / 2);
    if (n / 2) fb_store_lanes(odd + c / 2, o, n / 2);
  }
}
#endif
// `phases`: only the first ones (the others are not read).
static void fb_split_row(const float* __restrict src, fb_i64 W, fb_i64 pw, fb_i64 s, float* __restrict dst, fb_i64 phaseStride,
                         fb_i64 phases) {
  if (s == 1) __builtin_memcpy(dst + pw, src, (fb_u64)W * sizeof(float));
#if defined(__AVX512F__)
  else if (s == 2 && phases == 2) fb_split2_rows(src, W, pw, dst, phaseStride);
#endif
  else if (s == 2) fb_split_phases<2>(src, W, pw, s, dst, phaseStride, phases);
  else if (s == 4) fb_split_phases<4>(src, W, pw, s, dst, phaseStride, phases);
  else fb_split_phases<0>(src, W, pw, s, dst, phaseStride, phases);
}
static bool fb_has_epilogue(const FbConv& c) { return c.bias || c.res || c.lower || c.upper || c.silu; }
// fb_exp (the prelude's) a vector at a time: the same operations lane by lane, so the same values.
static inline fb_cv fb_exp_lanes(fb_cv x) {
  fb_cv c = x > 88.3762626647949f ? (fb_cv)88.3762626647949f : (x < -87.3365447504f ? (fb_cv)-87.3365447504f : x);
  fb_cv n = __builtin_elementwise_floor(c * 1.44269504088896341f + 0.5f);
  fb_cv r = c - n * 0.693359375f + n * 2.12194440e-4f;
  fb_cv p = 1.9875691500E-4f;
  p = p * r + 1.3981999507E-3f;
  p = p * r + 8.3334519073E-3f;
  p = p * r + 4.1665795894E-2f;
  p = p * r + 1.6666665459E-1f;
  p = p * r + 5.0000001201E-1f;
  p = p * r * r + r + 1.0f;
  fb_cv scale = __builtin_bit_cast(fb_cv, (__builtin_convertvector(n, fb_cvi) + 127) << 23);
  fb_cv y = p * scale;
  y = x > 88.3762626647949f ? (fb_cv)__builtin_inff() : y;
  y = x < -87.3365447504f ? (fb_cv)0.0f : y;
  return x != x ? x : y;
}
// SiLU as its separate kernel computes it, v * (1 / (exp(-v) + 1)), lane by lane.
static inline fb_cv fb_silu_lanes(fb_cv v) { return v * (1.0f / (fb_exp_lanes(-v) + 1.0f)); }
// The activation after the sums: SiLU, or the clamps (fb_max/fb_min's NaN rule lane by lane).
static inline fb_cv fb_conv_act(const FbConv& c, fb_cv v) {
  if (c.silu) return fb_silu_lanes(v);
  if (c.lower) v = (v != v) | (v > c.lo) ? v : (fb_cv)c.lo;
  if (c.upper) v = (v != v) | (v < c.hi) ? v : (fb_cv)c.hi;
  return v;
}
// y + at .. + len of channel o from src (the whole epilogue; src == y + at in place): bias, then
// residual, then the activation, a vector at a time, the last one masked. Runs are short (7-57
// floats: a row, or a tile's piece of one), and a scalar loop per part left most of them to its
// remainder.
static void fb_conv_epilogue(const FbConv& c, fb_i64 o, fb_i64 at, const float* src, fb_i64 len) {
  float* dst = c.y + at;
  const float* res = c.res ? c.res + at : 0;
  const float b = c.bias ? c.bias[o] : 0.0f;
  for (fb_i64 i = 0; i < len; i += kFbConvLanes) {
    fb_i64 n = len - i < kFbConvLanes ? len - i : kFbConvLanes;
    fb_cv v = fb_load_lanes(src + i, n);
    if (c.bias) v = v + b;
    if (c.res) v = v + fb_load_lanes(res + i, n);
    fb_store_lanes(dst + i, fb_conv_act(c, v), n);
  }
}
// ---- stride-phase planes: what the direct and depthwise convolutions read ------------------
// An image plane copied zero-padded and split by stride phase: padded row r and column col go to
// phase (r % sh, col % sw), position (r / sh, col / sw), each phase Hq x Wq. Tap (kh, kw) of output
// (oh, ow) then reads its phase at the output's own flat position oh * Wq + ow plus a fixed offset
// (fb_phase_taps), so a vector of outputs on that grid (OH rows of Wq >= OW columns, the extra
// columns thrown away) reads each tap as one contiguous load with no bounds checks.
static void fb_phase_shape(const FbConv& c, fb_i64& Hq, fb_i64& Wq) {
  Hq = (c.H + 2 * c.ph + c.sh - 1) / c.sh;
  Wq = (c.W + 2 * c.pw + c.sw - 1) / c.sw;
}
// Each tap's offset from an output's flat position, taps in (kh, kw) order; returns their count.
static int fb_phase_taps(const FbConv& c, fb_i64 Hq, fb_i64 Wq, fb_i64* taps) {
  int nt = 0;
  for (fb_i64 kh = 0; kh < c.KH; ++kh)
    for (fb_i64 kw = 0; kw < c.KW; ++kw) {
      fb_i64 a = kh * c.dh, b = kw * c.dw;
      taps[nt++] = ((a % c.sh) * c.sw + b % c.sw) * Hq * Wq + (a / c.sh) * Wq + b / c.sw;
    }
  return nt;
}
// The plane x (H x W) into its phases at dst; writes only the image's own positions (the padding
// is the caller's zeros). `firstOnly`: phase (0, 0) alone, all a 1x1 kernel reads.
static void fb_phase_load(const FbConv& c, const float* x, fb_i64 Hq, fb_i64 Wq, float* dst, bool firstOnly = false) {
  for (fb_i64 ih = 0; ih < c.H; ++ih) {
    fb_i64 r = ih + c.ph;  // row phase r % sh, column phases after it
    if (firstOnly && r % c.sh != 0) continue;
    fb_split_row(x + ih * c.W, c.W, c.pw, c.sw, dst + (r % c.sh) * c.sw * Hq * Wq + (r / c.sh) * Wq, Hq * Wq, firstOnly ? 1 : c.sw);
  }
}

// Depthwise convolutions (one input channel per group), plane by plane: the plane's phases on the
// stack, then its output grid in tiles of NV vectors, each an accumulator over every tap (one
// accumulator was a chain of dependent multiply-adds, a tap's latency per vector: 3x onnxruntime's
// time on mobilenet_v2). Taps in the same order as fb_conv_rows, so the same sums.
static const fb_i64 kFbDepthwisePlane = 16384;  // floats of the phases, and of the output grid, on the stack
static const fb_i64 kFbDepthwiseTaps = 32;      // widest kernel row
static const int kFbDepthwiseVectors = 8;       // most vectors per tile
// Floats of the phases, with the slack the last tile reads past the grid.
static fb_i64 fb_depthwise_floats(const FbConv& c, fb_i64 Hq, fb_i64 Wq) {
  return c.sh * c.sw * Hq * Wq + Wq + kFbDepthwiseVectors * kFbConvLanes;
}
template <int NV>
static void fb_depthwise_tile(const float* __restrict x, const fb_i64* __restrict taps, int nt, const float* __restrict w,
                              float* __restrict out) {
  fb_cv acc[NV];
  for (int j = 0; j < NV; ++j) acc[j] = 0.0f;
  for (int t = 0; t < nt; ++t) {
    fb_cv b = w[t];
    const float* p = x + taps[t];
    for (int j = 0; j < NV; ++j) acc[j] += b * *(const fb_cvu*)(p + j * kFbConvLanes);
  }
  for (int j = 0; j < NV; ++j) *(fb_cvu*)(out + j * kFbConvLanes) = acc[j];
}
// Whether a convolution of one input channel per group takes the vectorized path: kernel rows and
// columns within kFbDepthwiseTaps, the phases and the output grid within kFbDepthwisePlane.
static bool fb_depthwise_fits(const FbConv& c) {
  fb_i64 Hq, Wq;
  fb_phase_shape(c, Hq, Wq);
  return c.C == c.groups && c.KW <= kFbDepthwiseTaps && c.KH <= kFbDepthwiseTaps && fb_depthwise_floats(c, Hq, Wq) <= kFbDepthwisePlane &&
         c.OH * Wq + kFbDepthwiseVectors * kFbConvLanes <= kFbDepthwisePlane;
}
// The zero-padded, phase-split copy of one input plane that the depthwise forward and weight
// gradient read, and each tap's offset in it.
struct FbDepthwisePlane {
  fb_i64 Hq, Wq;
  int nt;
  fb_i64 taps[kFbDepthwiseTaps * kFbDepthwiseTaps];
  float padded[kFbDepthwisePlane];
  explicit FbDepthwisePlane(const FbConv& c) {
    fb_phase_shape(c, Hq, Wq);
    nt = fb_phase_taps(c, Hq, Wq, taps);
    fb_i64 n = fb_depthwise_floats(c, Hq, Wq);
    for (fb_i64 i = 0; i < n; ++i) padded[i] = 0.0f;  // the padding stays 0 plane after plane
  }
  void load(const FbConv& c, const float* xin) { fb_phase_load(c, xin, Hq, Wq, padded); }
};
// One plane's output grid (OH x Wq, rounded up to a tile) from its phases.
template <int NV>
static void fb_depthwise_grid(const FbDepthwisePlane& pl, fb_i64 G, const float* w, float* grid) {
  for (fb_i64 q = 0; q < G; q += NV * kFbConvLanes) fb_depthwise_tile<NV>(pl.padded + q, pl.taps, pl.nt, w, grid + q);
}
// `flip`: the kernel turned by 180 degrees (the input gradient of a stride-1 depthwise convolution
// is the output gradient convolved with it).
static void fb_conv_depthwise_rows(const FbConv& c, fb_i64 begin, fb_i64 end, bool flip) {
  fb_i64 opg = c.O / c.groups, P = c.OH * c.OW;
  FbDepthwisePlane plane(c);
  fb_i64 Wq = plane.Wq, G = c.OH * Wq, vectors = (G + kFbConvLanes - 1) / kFbConvLanes;
  int nv = vectors >= 8 ? 8 : vectors >= 4 ? 4 : vectors >= 2 ? 2 : 1;
  float grid[kFbDepthwisePlane] __attribute__((aligned(64)));
  bool epilogue = fb_has_epilogue(c);
  for (fb_i64 no = begin; no < end; ++no) {
    fb_i64 n = no / c.O, o = no % c.O;
    plane.load(c, c.x + (n * c.C + o / opg) * c.H * c.W);
    const float* wo = c.w + o * c.KH * c.KW;
    float turned[kFbDepthwiseTaps * kFbDepthwiseTaps];
    if (flip) {
      for (fb_i64 t = 0; t < c.KH * c.KW; ++t) turned[t] = wo[c.KH * c.KW - 1 - t];
      wo = turned;
    }
    if (nv == 8) fb_depthwise_grid<8>(plane, G, wo, grid);
    else if (nv == 4) fb_depthwise_grid<4>(plane, G, wo, grid);
    else if (nv == 2) fb_depthwise_grid<2>(plane, G, wo, grid);
    else fb_depthwise_grid<1>(plane, G, wo, grid);
    for (fb_i64 oh = 0; oh < c.OH; ++oh) {
      if (epilogue) fb_conv_epilogue(c, o, no * P + oh * c.OW, grid + oh * Wq, c.OW);
      else __builtin_memcpy(c.y + no * P + oh * c.OW, grid + oh * Wq, (fb_u64)c.OW * sizeof(float));
    }
  }
}
#if defined(__AVX512F__)
// Depthwise convolutions 16 channels at a time (one output channel per input channel): the lanes
// are channels. A band of input rows of 16 channels is turned into [row][column][16] (16 x 16
// transposes), every output position is then one vector, one multiply-add per tap with that
// tap's 16 weights, and each output row is turned back into 16 channel rows. On the plane grid
// (the lanes are positions) a 7x7 plane used 7 of 16 lanes, every tap was an unaligned load and
// a channel's fixed costs outweighed its multiply-adds: 960 channels of 7x7 3x3 took 0.1 ms, 4x
// onnxruntime's NCHWc kernels, which do this with the layout kept between layers. Stride,
// dilation and padding are index arithmetic here. Taps in (kh, kw) order, as fb_conv_rows.
static const fb_i64 kFbDw16Band = 32768, kFbDw16Row = 8192, kFbDw16Taps = 64;
static const int kFbDw16Block = 8;  // outputs a row computes at a time
// Floats a row's last block may read past the band's used rows: its outputs past OW reach
// (kFbDw16Block - 1) * stride columns further, strides up to kFbDw16Stride (the slack after them).
static const fb_i64 kFbDw16Stride = 4, kFbDw16Slack = (kFbDw16Block - 1) * kFbDw16Stride * 16;
// Row i of v (16 x 16) becomes column i: interleave pairs of rows (unpcklps/unpckhps), then pairs
// of pairs (unpcklpd/unpckhpd), then 128-bit quarters twice (shuff32x4): in-lane shuffles of one
// cycle where a general two-table permute (vpermt2ps) takes two on AMD's Zen 4.
static inline void fb_transpose16(fb_cv (&v)[16]) {
#define FB_S(x, y, ...) __builtin_shufflevector(x, y, __VA_ARGS__)
  fb_cv t[16], u[16];
  for (int k = 0; k < 8; ++k) {
    t[2 * k] = FB_S(v[2 * k], v[2 * k + 1], 0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29);
    t[2 * k + 1] = FB_S(v[2 * k], v[2 * k + 1], 2, 18, 3, 19, 6, 22, 7, 23, 10, 26, 11, 27, 14, 30, 15, 31);
  }
  for (int k = 0; k < 4; ++k)
    for (int h = 0; h < 2; ++h) {
      u[4 * k + 2 * h] = FB_S(t[4 * k + h], t[4 * k + h + 2], 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29);
      u[4 * k + 2 * h + 1] = FB_S(t[4 * k + h], t[4 * k + h + 2], 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31);
    }
  for (int g = 0; g < 16; g += 8)
    for (int j = 0; j < 4; ++j) {
      t[g + j] = FB_S(u[g + j], u[g + j + 4], 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27);
      t[g + j + 4] = FB_S(u[g + j], u[g + j + 4], 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
    }
  for (int j = 0; j < 8; ++j) {
    v[j] = FB_S(t[j], t[j + 8], 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27);
    v[j + 8] = FB_S(t[j], t[j + 8], 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
  }
#undef FB_S
}
// The epilogue of 16 channels, applied in registers: bias, then SiLU or the clamps. max(lo, a) and
// min(hi, a) give a where a is NaN (the second operand), as fb_max and fb_min.
struct FbDw16Epilogue {
  fb_cv bias, lo, hi;
  bool hasBias, lower, upper, silu;
  fb_cv apply(fb_cv a) const {
    if (hasBias) a = a + bias;
    if (silu) return fb_silu_lanes(a);
    if (lower) a = (fb_cv)__builtin_ia32_maxps512((fb_v16sf)lo, (fb_v16sf)a, 4);
    if (upper) a = (fb_cv)__builtin_ia32_minps512((fb_v16sf)hi, (fb_v16sf)a, 4);
    return a;
  }
};
// One output row from the band (`rows`: the band row of its first tap), KW and S known: blocks of
// 8 outputs, independent accumulators (a lone one is a chain of dependent multiply-adds). The last
// block runs past OW into the band's slack; those outputs are not stored.
template <int KW, int S>
static void fb_dw16_row_fixed(const float* __restrict band, fb_i64 cols, const fb_cv* __restrict wt, const FbDw16Epilogue& e,
                              fb_i64 KH, fb_i64 dh, fb_i64 rows, fb_i64 OW, float* __restrict out) {
  const int B = kFbDw16Block;
  for (fb_i64 ow0 = 0; ow0 < OW; ow0 += B) {
    fb_cv acc[B];
    for (int b = 0; b < B; ++b) acc[b] = 0.0f;
    for (fb_i64 kh = 0; kh < KH; ++kh) {
      const float* r = band + ((rows + kh * dh) * cols + ow0 * S) * 16;
      for (int kw = 0; kw < KW; ++kw) {
        fb_cv wv = wt[kh * KW + kw];
        for (int b = 0; b < B; ++b) acc[b] += *(const fb_cv*)(r + (b * S + kw) * 16) * wv;
      }
    }
    for (int b = 0; b < B; ++b) *(fb_cv*)(out + (ow0 + b) * 16) = e.apply(acc[b]);
  }
}
// Any kernel width, stride and dilation.
static void fb_dw16_row_any(const FbConv& c, const float* __restrict band, fb_i64 cols, const fb_cv* __restrict wt,
                            const FbDw16Epilogue& e, fb_i64 rows, float* __restrict out) {
  for (fb_i64 ow = 0; ow < c.OW; ++ow) {
    fb_cv acc = 0.0f;
    for (fb_i64 kh = 0; kh < c.KH; ++kh) {
      const float* r = band + ((rows + kh * c.dh) * cols + ow * c.sw) * 16;
      for (fb_i64 kw = 0; kw < c.KW; ++kw) acc += *(const fb_cv*)(r + kw * c.dw * 16) * wt[kh * c.KW + kw];
    }
    *(fb_cv*)(out + ow * 16) = e.apply(acc);
  }
}
static void fb_dw16_row(const FbConv& c, const float* band, fb_i64 cols, const fb_cv* wt, const FbDw16Epilogue& e, fb_i64 rows,
                        float* out) {
  if (c.dw == 1 && c.sw == 1 && c.KW == 3) fb_dw16_row_fixed<3, 1>(band, cols, wt, e, c.KH, c.dh, rows, c.OW, out);
  else if (c.dw == 1 && c.sw == 2 && c.KW == 3) fb_dw16_row_fixed<3, 2>(band, cols, wt, e, c.KH, c.dh, rows, c.OW, out);
  else if (c.dw == 1 && c.sw == 1 && c.KW == 5) fb_dw16_row_fixed<5, 1>(band, cols, wt, e, c.KH, c.dh, rows, c.OW, out);
  else if (c.dw == 1 && c.sw == 2 && c.KW == 5) fb_dw16_row_fixed<5, 2>(band, cols, wt, e, c.KH, c.dh, rows, c.OW, out);
  else if (c.dw == 1 && c.sw == 1 && c.KW == 7) fb_dw16_row_fixed<7, 1>(band, cols, wt, e, c.KH, c.dh, rows, c.OW, out);
  else fb_dw16_row_any(c, band, cols, wt, e, rows, out);
}
// The bands both the depthwise convolution and pooling (below) read: padded input rows of 16
// planes turned into [row][column][16] (rows outside the image and the pw columns each side hold
// `fill`), and output rows turned back into 16 planes.
struct FbBand16 {
  fb_i64 H, W, ph, pw, s, span, OH, OW;  // input, padding, row stride, rows one output reads, output
  fb_i64 cols, outRows;                   // a band row's columns; output rows one band holds the inputs of
  float fill;
  FbBand16(fb_i64 H_, fb_i64 W_, fb_i64 ph_, fb_i64 pw_, fb_i64 s_, fb_i64 span_, fb_i64 OH_, fb_i64 OW_, float fill_)
      : H(H_), W(W_), ph(ph_), pw(pw_), s(s_), span(span_), OH(OH_), OW(OW_), cols(W_ + 2 * pw_), fill(fill_) {
    outRows = (kFbDw16Band / (cols * 16) - span) / s + 1;
  }
  bool fits() const { return cols * 16 * span <= kFbDw16Band && (OW + 16) * 16 <= kFbDw16Row; }
  // Every row of out and of the band a call uses set once (the padding columns keep `fill`), and the
  // slack a row's last block reads past them.
  void clear(float* band, float* out) const {
    fb_i64 used = ((outRows < OH ? outRows : OH) - 1) * s + span;
    for (fb_i64 i = 0; i < used * cols * 16 + kFbDw16Slack; ++i) band[i] = fill;
    for (fb_i64 i = 0; i < (OW + 16) * 16; ++i) out[i] = 0.0f;  // a row's last transpose reads past OW
  }
  // A block of 16 planes: its input and output planes (lanes past `lanes` repeat the last input
  // plane, their outputs never stored), and the next block's, which run() prefetches.
  struct Block {
    const float* in[16];
    float* out[16];
    fb_i64 lanes;
    const float* nextIn; float* nextOut; fb_i64 nextPlanes;
  };
  // The block of planes [first, first + 16) of the `total` planes of x and y.
  Block planes(const float* x, float* y, fb_i64 first, fb_i64 total) const {
    Block b;
    b.lanes = total - first < 16 ? total - first : 16;
    for (int i = 0; i < 16; ++i) b.in[i] = x + (first + (i < b.lanes ? i : b.lanes - 1)) * H * W;
    for (int i = 0; i < 16; ++i) b.out[i] = y + (first + i) * OH * OW;
    fb_i64 rest = total - first - 16;  // planes after this block
    b.nextPlanes = rest < 0 ? 0 : rest < 16 ? rest : 16;
    b.nextIn = x + (first + 16) * H * W;
    b.nextOut = y + (first + 16) * OH * OW;
    return b;
  }
  // The block through `row(band, first band row, out)`, one output row at a time. Its planes are
  // read a row at a time, 16 short pieces (under a cache line for 7x7 .. 14x14 planes) that the
  // hardware prefetcher does not follow: on planes up to 32x32 the next block's input and output
  // come in as this one runs, a slice per row. One Zen 5 core, data out of L2 as in a model: 576
  // channels of 14x14 0.22 -> 0.061 ms, 960 of 7x7 0.066 -> 0.039, 192 of 28x28 0.098 -> 0.080;
  // on 56x56 and larger planes it gained as often as it lost (the rows are long enough).
  static const fb_i64 kPrefetchPlane = 1024;
  template <class Row>
  void run(const Block& b, float* band, float* out, Row row) const {
    const fb_i64 next = H * W <= kPrefetchPlane ? b.nextPlanes : 0;
    const fb_i64 inFloats = next * H * W, outFloats = next * OH * OW;
    for (fb_i64 oh0 = 0; oh0 < OH; oh0 += outRows) {
      fb_i64 ohEnd = oh0 + outRows < OH ? oh0 + outRows : OH;
      for (fb_i64 r = 0; r < (ohEnd - 1 - oh0) * s + span; ++r) {  // band row r: padded input row oh0 * s + r
        fb_i64 ih = oh0 * s + r - ph;
        float* dst = band + (r * cols + pw) * 16;
        if (ih < 0 || ih >= H) {
          for (fb_i64 i = 0; i < W * 16; ++i) dst[i] = fill;
          continue;
        }
        for (fb_i64 f = ih * inFloats / H; f < (ih + 1) * inFloats / H; f += 16) __builtin_prefetch(b.nextIn + f);
        for (fb_i64 p0 = 0; p0 < W; p0 += 16) {
          fb_i64 m = W - p0 < 16 ? W - p0 : 16;
          fb_cv v[16];
          for (int i = 0; i < 16; ++i) v[i] = fb_load_lanes(b.in[i] + ih * W + p0, m);
          fb_transpose16(v);
          for (fb_i64 j = 0; j < m; ++j) *(fb_cv*)(dst + (p0 + j) * 16) = v[j];
        }
      }
      for (fb_i64 oh = oh0; oh < ohEnd; ++oh) {
        for (fb_i64 f = oh * outFloats / OH; f < (oh + 1) * outFloats / OH; f += 16) __builtin_prefetch(b.nextOut + f, 1);
        row(band, (oh - oh0) * s, out);
        for (fb_i64 p0 = 0; p0 < OW; p0 += 16) {
          fb_i64 m = OW - p0 < 16 ? OW - p0 : 16;
          fb_cv v[16];
          for (int j = 0; j < 16; ++j) v[j] = *(const fb_cv*)(out + (p0 + j) * 16);  // past OW: unstored
          fb_transpose16(v);
          for (fb_i64 i = 0; i < b.lanes; ++i) fb_store_lanes(b.out[i] + oh * OW + p0, v[i], m);
        }
      }
    }
  }
};
static FbBand16 fb_dw16_band(const FbConv& c) {
  return FbBand16(c.H, c.W, c.ph, c.pw, c.sh, (c.KH - 1) * c.dh + 1, c.OH, c.OW, 0.0f);
}
static bool fb_dw16_fits(const FbConv& c) {
  return c.C == c.groups && c.O == c.C && !c.res && c.KH * c.KW <= kFbDw16Taps && fb_dw16_band(c).fits();
}
// Rows (n, channel) as fb_conv_rows; a row whose channel starts a block of 16 does the block.
// `flip`: the kernel turned by 180 degrees (the stride-1 input gradient).
static void fb_conv_dw16_rows(const FbConv& c, fb_i64 begin, fb_i64 end, bool flip) {
  const FbBand16 g = fb_dw16_band(c);
  const fb_i64 taps = c.KH * c.KW;
  float band[kFbDw16Band + kFbDw16Slack] __attribute__((aligned(64)));
  float out[kFbDw16Row] __attribute__((aligned(64)));
  fb_cv wt[kFbDw16Taps];
  g.clear(band, out);
  for (fb_i64 row = begin; row < end; ++row) {
    fb_i64 o0 = row % c.O;
    if (o0 % 16) continue;
    // Plane `row` of x and y (channels per image C == O); the next block prefetched only within
    // the image.
    FbBand16::Block blk = g.planes(c.x, c.y, row, row - o0 + c.O);
    const fb_i64 lanes = blk.lanes;
    for (fb_i64 t = 0; t < taps; ++t)
      for (int i = 0; i < 16; ++i) wt[t][i] = c.w[(o0 + (i < lanes ? i : lanes - 1)) * taps + (flip ? taps - 1 - t : t)];
    FbDw16Epilogue e{0.0f, c.lo, c.hi, c.bias != 0, c.lower != 0, c.upper != 0, c.silu != 0};
    if (c.bias)
      for (int i = 0; i < 16; ++i) e.bias[i] = c.bias[o0 + (i < lanes ? i : lanes - 1)];
    g.run(blk, band, out, [&](const float* b, fb_i64 rows, float* o) { fb_dw16_row(c, b, g.cols, wt, e, rows, o); });
  }
}
#endif
extern "C" void fb_conv_rows(fb_i64 begin, fb_i64 end, void* data) {  // rows: (n, o)
  const FbConv& c = *(const FbConv*)data;
  fb_i64 cpg = c.C / c.groups, opg = c.O / c.groups;
#if defined(__AVX512F__)
  if (fb_dw16_fits(c)) {
    fb_conv_dw16_rows(c, begin, end, false);
    return;
  }
#endif
  if (cpg == 1 && fb_depthwise_fits(c)) {
    fb_conv_depthwise_rows(c, begin, end, false);
    return;
  }
  for (fb_i64 no = begin; no < end; ++no) {
    fb_i64 n = no / c.O, o = no % c.O, g = o / opg;
    float* out = c.y + no * c.OH * c.OW;
    for (fb_i64 i = 0; i < c.OH * c.OW; ++i) out[i] = 0.0f;
    for (fb_i64 ci = 0; ci < cpg; ++ci)
      for (fb_i64 kh = 0; kh < c.KH; ++kh)
        for (fb_i64 kw = 0; kw < c.KW; ++kw) {
          float wv = c.w[((o * cpg + ci) * c.KH + kh) * c.KW + kw];
          const float* xin = c.x + (n * c.C + g * cpg + ci) * c.H * c.W;
          fb_i64 lo, hi, off = kw * c.dw - c.pw;
          fb_valid_cols(kw, c.W, c.OW, c.sw, c.pw, c.dw, lo, hi);
          for (fb_i64 oh = 0; oh < c.OH; ++oh) {
            fb_i64 ih = oh * c.sh - c.ph + kh * c.dh;
            if (ih < 0 || ih >= c.H) continue;
            float* __restrict o = out + oh * c.OW;
            const float* __restrict xr = xin + ih * c.W + off;
            for (fb_i64 ow = lo; ow < hi; ++ow) o[ow] += wv * xr[ow * c.sw];
          }
        }
    if (fb_has_epilogue(c)) fb_conv_epilogue(c, o, no * c.OH * c.OW, out, c.OH * c.OW);
  }
}
// dx: rows (n, input channel); x is the output gradient, y the input gradient.
extern "C" void fb_conv_input_grad_rows(fb_i64 begin, fb_i64 end, void* data) {
  const FbConv& c = *(const FbConv*)data;
  fb_i64 cpg = c.C / c.groups, opg = c.O / c.groups;
  // Depthwise at stride 1: dx = gy convolved with the turned kernel, padded by (K-1)*d - p, on the
  // vectorized forward path (rows (n, c) are its rows (n, o): one output channel per input channel).
  if (cpg == 1 && opg == 1 && c.sh == 1 && c.sw == 1 && (c.KH - 1) * c.dh >= c.ph && (c.KW - 1) * c.dw >= c.pw) {
    FbConv t{c.x, c.w, c.y, c.N, c.O, c.OH, c.OW, c.C, c.KH, c.KW, c.H, c.W, c.groups, 1, 1,
             (c.KH - 1) * c.dh - c.ph, (c.KW - 1) * c.dw - c.pw, c.dh, c.dw};
#if defined(__AVX512F__)
    if (fb_dw16_fits(t)) {
      fb_conv_dw16_rows(t, begin, end, true);
      return;
    }
#endif
    if (fb_depthwise_fits(t)) {
      fb_conv_depthwise_rows(t, begin, end, true);
      return;
    }
  }
  for (fb_i64 nc = begin; nc < end; ++nc) {
    fb_i64 n = nc / c.C, cin = nc % c.C, g = cin / cpg, ci = cin % cpg;
    float* dx = c.y + nc * c.H * c.W;
    for (fb_i64 i = 0; i < c.H * c.W; ++i) dx[i] = 0.0f;
    for (fb_i64 oo = 0; oo < opg; ++oo) {
      fb_i64 o = g * opg + oo;
      const float* gy = c.x + (n * c.O + o) * c.OH * c.OW;
      for (fb_i64 kh = 0; kh < c.KH; ++kh)
        for (fb_i64 kw = 0; kw < c.KW; ++kw) {
          float wv = c.w[((o * cpg + ci) * c.KH + kh) * c.KW + kw];
          fb_i64 lo, hi, off = kw * c.dw - c.pw;
          fb_valid_cols(kw, c.W, c.OW, c.sw, c.pw, c.dw, lo, hi);
          for (fb_i64 oh = 0; oh < c.OH; ++oh) {
            fb_i64 ih = oh * c.sh - c.ph + kh * c.dh;
            if (ih < 0 || ih >= c.H) continue;
            float* __restrict d = dx + ih * c.W + off;
            const float* __restrict g = gy + oh * c.OW;
            for (fb_i64 ow = lo; ow < hi; ++ow) d[ow * c.sw] += wv * g[ow];
          }
        }
    }
  }
}
// dw: rows (o, ci); x is the input, w the output gradient, y the weight gradient.
// Depthwise weight gradients (rows o, one input channel each): each image's input plane copied
// as the forward's (zero-padded, split by stride phase), then every tap's sum of input times
// output gradient eight output columns at a time (the scalar loop's float sum cannot vectorize),
// the row's last OW % 8 columns in a scalar sum.
static void fb_depthwise_weight_grad_rows(const FbConv& c, fb_i64 begin, fb_i64 end) {
  fb_i64 opg = c.O / c.groups, taps = c.KH * c.KW;
  FbDepthwisePlane plane(c);
  fb_f8 acc[kFbDepthwiseTaps * kFbDepthwiseTaps];
  float tail[kFbDepthwiseTaps * kFbDepthwiseTaps];
  fb_i64 full = c.OW / 8 * 8;
  for (fb_i64 o = begin; o < end; ++o) {
    for (fb_i64 t = 0; t < taps; ++t) acc[t] = 0.0f, tail[t] = 0.0f;
    for (fb_i64 n = 0; n < c.N; ++n) {
      plane.load(c, c.x + (n * c.C + o / opg) * c.H * c.W);
      const float* gy = c.w + (n * c.O + o) * c.OH * c.OW;
      for (fb_i64 kh = 0; kh < c.KH; ++kh)
        for (fb_i64 kw = 0; kw < c.KW; ++kw) {
          fb_f8 a = acc[kh * c.KW + kw];
          float sc = tail[kh * c.KW + kw];
          for (fb_i64 oh = 0; oh < c.OH; ++oh) {
            const float* rp = plane.padded + plane.taps[kh * c.KW + kw] + oh * plane.Wq;
            const float* g = gy + oh * c.OW;
            for (fb_i64 ow = 0; ow < full; ow += 8) {
              fb_f8 v, gv;
              __builtin_memcpy(&v, rp + ow, sizeof v);
              __builtin_memcpy(&gv, g + ow, sizeof gv);
              a += v * gv;
            }
            for (fb_i64 ow = full; ow < c.OW; ++ow) sc += rp[ow] * g[ow];
          }
          acc[kh * c.KW + kw] = a;
          tail[kh * c.KW + kw] = sc;
        }
    }
    for (fb_i64 t = 0; t < taps; ++t) {
      fb_f8 a = acc[t];
      c.y[o * taps + t] = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7])) + tail[t];
    }
  }
}
extern "C" void fb_conv_weight_grad_rows(fb_i64 begin, fb_i64 end, void* data) {
  const FbConv& c = *(const FbConv*)data;
  fb_i64 cpg = c.C / c.groups, opg = c.O / c.groups;
  if (cpg == 1 && fb_depthwise_fits(c)) {
    fb_depthwise_weight_grad_rows(c, begin, end);
    return;
  }
  for (fb_i64 oc = begin; oc < end; ++oc) {
    fb_i64 o = oc / cpg, ci = oc % cpg, g = o / opg;
    for (fb_i64 kh = 0; kh < c.KH; ++kh)
      for (fb_i64 kw = 0; kw < c.KW; ++kw) {
        float acc = 0.0f;
        for (fb_i64 n = 0; n < c.N; ++n) {
          const float* xin = c.x + (n * c.C + g * cpg + ci) * c.H * c.W;
          const float* gy = c.w + (n * c.O + o) * c.OH * c.OW;
          fb_i64 lo, hi, off = kw * c.dw - c.pw;
          fb_valid_cols(kw, c.W, c.OW, c.sw, c.pw, c.dw, lo, hi);
          for (fb_i64 oh = 0; oh < c.OH; ++oh) {
            fb_i64 ih = oh * c.sh - c.ph + kh * c.dh;
            if (ih < 0 || ih >= c.H) continue;
            const float* __restrict xr = xin + ih * c.W + off;
            const float* __restrict g = gy + oh * c.OW;
            for (fb_i64 ow = lo; ow < hi; ++ow) acc += xr[ow * c.sw] * g[ow];
          }
        }
        c.y[(oc * c.KH + kh) * c.KW + kw] = acc;
      }
  }
}

// ---- extern: direct convolution (the forward of ungrouped and grouped convolutions) ---------
// An implicit GEMM with no im2col: each image is copied once into its stride-phase planes (above),
// and the outputs on the phase grid are computed in tiles of MR output channels x NV vectors of
// positions held in registers over all input channels and taps; the weights are read in place
// (row o, stride K).
static const int kFbDirectTaps = 128;  // widest KH*KW on this path
static const fb_i64 kFbPackFloats = 24576;  // a 1x1 tile's packed input, on the stack
static const fb_i64 kFbPackImage = 65536;   // floats of input from which an in-place 1x1 packs its tiles first
// Rows of a register tile (8 only where kFbConvRows is) for `count` output channels.
static int fb_tile_rows(fb_i64 count) { return count >= kFbConvRows ? kFbConvRows : count >= 4 ? 4 : count >= 2 ? 2 : 1; }
// The first of block `ob`'s `mr` channels of `count`: the last block starts mr back from the end,
// overlapping the one before (whose channels it does not store again).
static fb_i64 fb_block_start(fb_i64 ob, fb_i64 mr, fb_i64 count) { return ob * mr < count - mr ? ob * mr : count - mr; }
// The first position of tile t (nr positions) of a grid: the last tile of a grid of at least one
// tile starts nr back from the grid's end, so no tile reads past it.
static fb_i64 fb_tile_start(fb_i64 t, fb_i64 nr, fb_i64 grid) { return t * nr + nr > grid && grid >= nr ? grid - nr : t * nr; }
struct FbDirectConv {
  const FbConv* c; float* xp;        // xp: the padded phase planes, image after image
  fb_i64 Hq, Wq, chan, image;        // phase plane rows and columns; floats per channel, per image
  fb_i64 cpg, opg, K, grid, tiles, oblocks;
  fb_i64 taps[kFbDirectTaps]; int nt, mr, nv;
  bool tileMajor;  // rows run every block of channels over one tile before the next tile
  bool onePhase;   // a 1x1 kernel: only phase (0, 0) is copied and read
  bool packed;     // a 1x1 kernel read in place, each tile's pieces first copied together at xp: [n][g][tile][c][NR]
};
// ---- Winograd F(2x2, 3x3): the stride-1 3x3 convolutions, 2.25x fewer multiply-adds ---------
// Lavin and Gray's minimal filtering: a 2x2 tile of outputs is A^T [(G g G^T) * (B^T d B)] A for
// its 4x4 input tile d, so the convolution becomes 16 independent products U[k] (O x C, weights
// transformed) times V[k] (C x tiles, inputs transformed), each a 1x1 convolution that runs on
// fb_direct_tile, and each tile's 16 products fold back into its 2x2 outputs. The transforms are
// additions and halvings only. 36 of resnet18's 3x3 multiply-adds per 2x2 outputs become 16.
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]  G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1]
//   A^T = [1 1 1 0; 0 1 -1 -1]
// The zero-padded input is split into its four stride-2 phases, each (TH + 1) x (TW + 1), so that
// d[r][s] of tile (th, tw) is phase (r % 2, s % 2) at (th + r / 2, tw + s / 2): tiles along a row
// read contiguous lanes. Tiles sit on the phases' grid, t = th * Wq + tw; the grid's last column
// (tw = TW) is computed and thrown away, as the direct convolution's extra columns are.
static const fb_i64 kFbWinoPlane = 16384;  // most floats of a plane's four phases (outputs up to 126 x 126): V is 4x the image
struct FbWinograd {
  const FbConv* c;
  const float* w;   // the weights, [O][C][3][3], or (turned) the forward's [C][O][3][3] read turned by 180 degrees
  bool turned;      // the input gradient: the forward's kernel turned and its channel roles swapped
  float* X;         // [n][c][4][Hq][Wq]: the image's planes, zero-padded, split into their stride-2 phases
  float* V;         // [n][block][k][c][NR] (k kStride floats apart): a block's 16 products, channel after channel
  float* U;         // [k][o][c] (k uStride floats apart)
  fb_i64 TH, TW, Hq, Wq, grid, blocks, NR, oblocks, kStride, uStride;
  int mr, nv;
  bool tileMajor;
};
// Whether a convolution may run as Winograd F(2x2, 3x3): 3x3, stride 1, not dilated, ungrouped,
// planes within kFbWinoPlane.
static bool fb_wino_fits(const FbConv& c) {
  fb_i64 TH = (c.OH + 1) / 2, TW = (c.OW + 1) / 2;
  return c.KH == 3 && c.KW == 3 && c.sh == 1 && c.sw == 1 && c.dh == 1 && c.dw == 1 && c.groups == 1 && c.OH > 0 &&
         c.OW > 0 && 4 * (TH + 1) * (TW + 1) <= kFbWinoPlane;
}
// The 16 products' pieces of V and U are a cache line more than their size apart: the transforms
// write all 16 at once, and at a multiple of 4 KB (64 x 64 channels) they shared one set of the
// L1 cache (the weight transform of a 64 -> 64 convolution: 0.23 ms, 0.01 ms apart).
static const fb_i64 kFbWinoSkew = 16;
struct FbWinoKey { fb_i64 weights, version, turned; };  // what U was transformed from (fits kFbWinoSkew floats)
// Floats of scratch: the phases X (with the slack the last block reads past them), V (every block
// of at most 48 tiles, past the grid), U, then U's cache key (FbWinoKey).
static fb_i64 fb_wino_scratch(const FbConv& c) {
  fb_i64 TH = (c.OH + 1) / 2, TW = (c.OW + 1) / 2, grid = TH * (TW + 1), blocks = (grid + kFbConvLanes - 1) / kFbConvLanes;
  return c.N * c.C * 4 * (TH + 1) * (TW + 1) + 4 * kFbConvLanes + c.N * blocks * 16 * (c.C * 3 * kFbConvLanes + kFbWinoSkew) +
         16 * (c.O * c.C + kFbWinoSkew) + kFbWinoSkew;
}
// Floats of scratch the padded copy (or Winograd's transforms) take; cpp_codegen.cpp's
// directConvScratchFloats mirrors it.
static fb_i64 fb_direct_scratch(const FbConv& c, fb_i64& Hq, fb_i64& Wq) {
  fb_phase_shape(c, Hq, Wq);
  fb_i64 copy = c.N * c.C * c.sh * c.sw * Hq * Wq + Wq + 4 * kFbConvLanes;  // the last tile reads past the grid
  if (c.KH == 1 && c.KW == 1 && c.sh == 1 && c.sw == 1 && c.ph == 0 && c.pw == 0) copy += c.N * c.C * 3 * kFbConvLanes;  // packed tiles
  fb_i64 wino = fb_wino_fits(c) ? fb_wino_scratch(c) : 0;
  return copy > wino ? copy : wino;
}
static void fb_direct_pad_rows(fb_i64 begin, fb_i64 end, void* data) {  // rows: (n, c) planes
  const FbDirectConv& d = *(const FbDirectConv*)data;
  const FbConv& c = *d.c;
  for (fb_i64 pl = begin; pl < end; ++pl) {
    float* dst = d.xp + pl * d.chan;
    __builtin_memset(dst, 0, (fb_u64)d.chan * sizeof(float));
    fb_phase_load(c, c.x + pl * c.H * c.W, d.Hq, d.Wq, dst, d.onePhase);
  }
}
// acc[i][j] = sum over input channels and taps of w[i][k] * x[tap + j]: one tile into `out`.
// wnext, xnext (or null): the next block's MR weight rows, the next tile's input (1x1 kernels),
// prefetched as this tile reads its own.
template <int MR, int NV>
static void fb_direct_tile(const float* __restrict x, fb_i64 chan, const fb_i64* __restrict taps, int nt, fb_i64 C,
                           const float* __restrict w, fb_i64 K, float* __restrict out, const float* wnext, const float* xnext) {
  fb_cv acc[MR][NV];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j) acc[i][j] = 0.0f;
  for (fb_i64 ci = 0; ci < C; ++ci, x += chan) {
    if (wnext && ((ci * nt) & 15) < nt)  // once per 16 floats of each row
      for (int i = 0; i < MR; ++i) __builtin_prefetch(wnext + i * K + ci * nt);
    if (xnext)  // NV vectors, unaligned: NV + 1 cache lines
      for (int j = 0; j <= NV; ++j) __builtin_prefetch(xnext + ci * chan + j * kFbConvLanes);
    for (int t = 0; t < nt; ++t, ++w) {
      fb_cv v[NV];
      for (int j = 0; j < NV; ++j) v[j] = *(const fb_cvu*)(x + taps[t] + j * kFbConvLanes);
      for (int i = 0; i < MR; ++i) {
        fb_cv b = w[i * K];
        for (int j = 0; j < NV; ++j) acc[i][j] += b * v[j];
      }
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j) *(fb_cvu*)(out + (i * NV + j) * kFbConvLanes) = acc[i][j];
}
// The vectors of tile t of a direct convolution (nv of every tile but the last): the last tile of
// a grid of two or more covers only the positions left, ceil(left / kFbConvLanes) vectors ending
// at the grid's end, where a full one would start nv vectors back and compute again positions the
// tile before has (13x13: 169 positions in four tiles of 48 are 192 lanes, in three and one of 32
// 176; the 512 -> 1000 1x1 classifier of squeezenet1_1 computes 8% fewer).
static int fb_tile_nv(const FbDirectConv& d, fb_i64 t) {
  fb_i64 NR = d.nv * kFbConvLanes, left = d.grid - t * NR;
  return t + 1 < d.tiles || d.tiles < 2 ? d.nv : (int)((left + kFbConvLanes - 1) / kFbConvLanes);
}
// A call's buffers for its rows: one tile of outputs, and a 1x1 kernel's tile input packed. A 1x1
// kernel's tile reads one piece of every input channel, 784 bytes or more apart and across cache
// lines; where several blocks of channels run on it one after the other (tileMajor), it is copied
// once into `packed`, contiguous and aligned (a 576 -> 96 1x1 at 14x14: 119 -> 153 GFLOP/s on one
// core).
// Whether fb_direct_tiles copies each tile's input together itself (tiles of nr positions): a 1x1
// kernel in tile order that 4 or more blocks of channels read, its pieces within the buffer.
static bool fb_tile_packs(const FbDirectConv& d, fb_i64 nr) {
  return d.tileMajor && d.nt == 1 && d.oblocks >= 4 && d.cpg * nr <= kFbPackFloats;
}
struct FbDirectBuffers {
  float tile[kFbConvRows * 3 * kFbConvLanes] __attribute__((aligned(64)));
  float packed[kFbPackFloats] __attribute__((aligned(64)));
  const float* packedFrom = 0;
};
// Rows from `begin` while their tiles are NV vectors wide (fb_tile_nv: the last tile may be
// narrower than the others); returns the first row not run (`end`, or one of another width).
// Row r: (n, group, block of MR output channels, tile of positions), or (n, group, tile, block)
// when tileMajor. The last block of a group starts MR back from its end (overlapping the one
// before, whose rows it does not store again). Outputs go through the epilogue run by run.
template <int MR, int NV>
static fb_i64 fb_direct_tiles(const FbDirectConv& d, fb_i64 begin, fb_i64 end, FbDirectBuffers& buf) {
  const FbConv& c = *d.c;
  const fb_i64 NR = NV * kFbConvLanes, P = c.OH * c.OW, tileNR = d.nv * kFbConvLanes;
  const bool epilogue = fb_has_epilogue(c);
  float* tile = buf.tile;
  const bool pack = fb_tile_packs(d, NR);
  for (fb_i64 r = begin; r < end; ++r) {
    fb_i64 t = d.tileMajor ? r / d.oblocks % d.tiles : r % d.tiles, ob = d.tileMajor ? r % d.oblocks : r / d.tiles % d.oblocks,
           ng = r / (d.tiles * d.oblocks);
    if (fb_tile_nv(d, t) != NV) return r;
    fb_i64 n = ng / c.groups, g = ng % c.groups, o0 = fb_block_start(ob, MR, d.opg), q0 = t * tileNR;
    fb_i64 at = NV == d.nv ? fb_tile_start(t, NR, d.grid) : d.grid - NR;  // no read past the grid: the in-place input has no slack
    const float* x = d.xp + n * d.image + g * d.cpg * d.chan + at;
    fb_i64 chan = d.chan;
    if (d.packed) {  // the tile's pieces, tileNR floats a channel from the grid's end back
      x = d.xp + (ng * d.tiles + t) * d.cpg * tileNR + (tileNR - NR) * (NV != d.nv);
      chan = tileNR;
    }
    if (pack) {
      if (buf.packedFrom != x)
        for (fb_i64 ci = 0; ci < d.cpg; ++ci)
          for (int j = 0; j < NV; ++j) *(fb_cv*)(buf.packed + ci * NR + j * kFbConvLanes) = *(const fb_cvu*)(x + ci * chan + j * kFbConvLanes);
      buf.packedFrom = x;
      x = buf.packed;
      chan = NR;
    }
    const float* w = c.w + (g * d.opg + o0) * d.K;
    fb_i64 yat = (n * c.O + g * d.opg + o0) * P;  // channel o0's first output
    int first = (int)(ob * MR - o0);
    // The block that runs next: its weight rows are short streams (K floats each, 640 bytes for a
    // 160 -> 960 1x1) that the hardware prefetcher catches too late, and a 1x1 on a 7x7 grid
    // spent a third of its time waiting for them (160 -> 960: 0.18 -> 0.12 ms on one Zen 5 core,
    // weights out of L2 as in a model). In block order only a block's first tile fetches.
    const float* wnext = 0;
    fb_i64 nob = d.tileMajor || t == 0 ? ob + 1 : d.oblocks;
    if (nob < d.oblocks) wnext = c.w + (g * d.opg + fb_block_start(nob, MR, d.opg)) * d.K;
    // The next tile of a 1x1 kernel read in place: one piece of each input channel, a plane apart,
    // more streams than the hardware prefetcher follows (a 144 -> 24 1x1 at 56x56, input out of
    // L2: 0.21 -> 0.14 ms on one Zen 5 core; 32 -> 16 at 112x112: 0.20 -> 0.11). Fetched by the
    // tile's first block.
    const float* xnext = 0;
    if (d.nt == 1 && !pack && !d.packed && t + 1 < d.tiles && (!d.tileMajor || ob == 0)) xnext = x + NR;
    fb_direct_tile<MR, NV>(x, chan, d.taps, d.nt, d.cpg, w, d.K, tile, wnext, xnext);
    for (fb_i64 q = q0; q < q0 + tileNR && q < d.grid;) {  // the tile's runs of real columns, row by row
      fb_i64 oh = q / d.Wq, ow = q % d.Wq, rowEnd = d.Wq == c.OW ? d.grid : oh * d.Wq + c.OW;  // no extra columns: one run
      if (ow >= c.OW) { q = (oh + 1) * d.Wq; continue; }
      fb_i64 len = (rowEnd < q0 + tileNR ? rowEnd : q0 + tileNR) - q;
      for (fb_i64 i = first; i < MR; ++i) {
        if (epilogue) fb_conv_epilogue(c, g * d.opg + o0 + i, yat + i * P + oh * c.OW + ow, tile + i * NR + (q - at), len);
        else __builtin_memcpy(c.y + yat + i * P + oh * c.OW + ow, tile + i * NR + (q - at), (fb_u64)len * sizeof(float));
      }
      q += len;
    }
  }
  return end;
}
// rows: (n, group, tile) of a 1x1 read in place: the tile's NR floats of each input channel, one
// after the other (the last tile starts NR back from the grid's end, as fb_direct_tiles reads it).
static void fb_direct_pack_rows(fb_i64 begin, fb_i64 end, void* data) {
  const FbDirectConv& d = *(const FbDirectConv*)data;
  const FbConv& c = *d.c;
  const fb_i64 NR = d.nv * kFbConvLanes;
  for (fb_i64 r = begin; r < end; ++r) {
    fb_i64 t = r % d.tiles, ng = r / d.tiles, n = ng / c.groups, g = ng % c.groups;
    fb_i64 at = fb_tile_start(t, NR, d.grid);
    const float* src = c.x + n * d.image + g * d.cpg * d.chan + at;
    float* dst = d.xp + r * d.cpg * NR;
    for (fb_i64 ci = 0; ci < d.cpg; ++ci)
      for (fb_i64 j = 0; j < NR; j += kFbConvLanes) *(fb_cvu*)(dst + ci * NR + j) = *(const fb_cvu*)(src + ci * d.chan + j);
  }
}
// Calls run(FbInt<MR>(), FbInt<NV>()) for a register tile of mr rows (8 only where kFbConvRows
// is, 4, 2, 1) by nv vectors (1-3): the direct and Winograd tiles' one switch.
template <int N> struct FbInt { static const int value = N; };
template <class Run>
static void fb_tile_shape(int mr, int nv, Run run) {
  auto rows = [&](auto m) {
    if (nv == 1) run(m, FbInt<1>());
    else if (nv == 2) run(m, FbInt<2>());
    else run(m, FbInt<3>());
  };
  if (mr >= 8) rows(FbInt<kFbConvRows>());
  else if (mr >= 4) rows(FbInt<4>());
  else if (mr >= 2) rows(FbInt<2>());
  else rows(FbInt<1>());
}
static void fb_direct_rows(fb_i64 begin, fb_i64 end, void* data) {
  const FbDirectConv& d = *(const FbDirectConv*)data;
  FbDirectBuffers buf;
  for (fb_i64 r = begin; r < end;) {  // runs of rows of one tile width
    fb_i64 t = d.tileMajor ? r / d.oblocks % d.tiles : r % d.tiles;
    fb_tile_shape(d.mr, fb_tile_nv(d, t), [&](auto mr, auto nv) { r = fb_direct_tiles<decltype(mr)::value, decltype(nv)::value>(d, r, end, buf); });
  }
}
// u = G g G^T of one 3x3 kernel g (row-major), T a float or a vector of kernels lane by lane.
template <class T>
static inline void fb_wino_kernel(const T (&g)[9], T (&u)[16]) {
  T a[4][3];  // G g
  for (int k = 0; k < 3; ++k) {
    a[0][k] = g[k];
    a[1][k] = 0.5f * (g[k] + g[3 + k] + g[6 + k]);
    a[2][k] = 0.5f * (g[k] - g[3 + k] + g[6 + k]);
    a[3][k] = g[6 + k];
  }
  for (int r = 0; r < 4; ++r) {
    u[r * 4] = a[r][0];
    u[r * 4 + 1] = 0.5f * (a[r][0] + a[r][1] + a[r][2]);
    u[r * 4 + 2] = 0.5f * (a[r][0] - a[r][1] + a[r][2]);
    u[r * 4 + 3] = a[r][2];
  }
}
// rows: o. Input channels 16 at a time where AVX-512 gathers each tap of 16 kernels (9 floats
// apart, or 9 x O turned): a scalar kernel at a time, 16 stores 4 KB apart, took 30 cycles a
// kernel (0.5 ms for a 256 x 256 layer on one Zen 5 core).
static void fb_wino_weight_rows(fb_i64 begin, fb_i64 end, void* data) {
  const FbWinograd& wg = *(const FbWinograd*)data;
  const FbConv& c = *wg.c;
  for (fb_i64 o = begin; o < end; ++o) {
    fb_i64 ci = 0;
    float* uo = wg.U + o * c.C;
#if defined(__AVX512F__)
    typedef int fb_v16si __attribute__((__vector_size__(64)));
    const fb_cvi lanes = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    const fb_cvi apart = lanes * (int)(wg.turned ? 9 * c.O : 9);
    for (; ci + 16 <= c.C; ci += 16) {
      const float* first = wg.turned ? wg.w + (ci * c.O + o) * 9 : wg.w + (o * c.C + ci) * 9;
      fb_cv g[9], u[16];
      for (int k = 0; k < 9; ++k)
        g[k] = (fb_cv)__builtin_ia32_gathersiv16sf((fb_v16sf)(fb_cv)0.0f, first + (wg.turned ? 8 - k : k), (fb_v16si)apart,
                                                   (unsigned short)0xffff, 4);
      fb_wino_kernel(g, u);
      for (int k = 0; k < 16; ++k) *(fb_cvu*)(uo + k * wg.uStride + ci) = u[k];
    }
#endif
    for (; ci < c.C; ++ci) {
      float g[9], u[16];
      for (int k = 0; k < 9; ++k) g[k] = wg.turned ? wg.w[(ci * c.O + o) * 9 + 8 - k] : wg.w[(o * c.C + ci) * 9 + k];
      fb_wino_kernel(g, u);
      for (int k = 0; k < 16; ++k) uo[k * wg.uStride + ci] = u[k];
    }
  }
}
// The image's planes into their phases (rows: (n, c) planes), each 4 x Hq x Wq floats, zero-padded.
static void fb_wino_pad_rows(fb_i64 begin, fb_i64 end, void* data) {
  const FbWinograd& wg = *(const FbWinograd*)data;
  const FbConv& c = *wg.c;
  FbConv split = c;  // the padded plane split by 2 in both directions
  split.sh = split.sw = 2;
  for (fb_i64 pl = begin; pl < end; ++pl) {
    float* dst = wg.X + pl * 4 * wg.Hq * wg.Wq;
    __builtin_memset(dst, 0, (fb_u64)(4 * wg.Hq * wg.Wq) * sizeof(float));
    fb_phase_load(split, c.x + pl * c.H * c.W, wg.Hq, wg.Wq, dst);
  }
}
// V of one block of tiles of image n, every input channel, into v (16 x kStride floats): B^T d B,
// kFbConvLanes tiles at a time. Tiles past the grid read up to NR floats past the image's phases
// (the scratch's slack).
static void fb_wino_input_block(const FbWinograd& wg, fb_i64 n, fb_i64 b, float* v) {
  const FbConv& c = *wg.c;
  const fb_i64 phase = wg.Hq * wg.Wq, NR = wg.NR, kStride = wg.kStride;
  for (fb_i64 ci = 0; ci < c.C; ++ci) {
    const float* planes = wg.X + (n * c.C + ci) * 4 * phase + b * NR;
    float* out = v + ci * NR;
    for (fb_i64 j = 0; j < NR; j += kFbConvLanes) {
      const float* p = planes + j;
      fb_cv d[4][4], m[4][4];
      for (int r = 0; r < 4; ++r)
        for (int s = 0; s < 4; ++s) d[r][s] = *(const fb_cvu*)(p + ((r & 1) * 2 + (s & 1)) * phase + (r >> 1) * wg.Wq + (s >> 1));
      for (int s = 0; s < 4; ++s) {  // B^T d
        m[0][s] = d[0][s] - d[2][s];
        m[1][s] = d[1][s] + d[2][s];
        m[2][s] = d[2][s] - d[1][s];
        m[3][s] = d[1][s] - d[3][s];
      }
      for (int r = 0; r < 4; ++r) {  // (B^T d) B
        float* o = out + r * 4 * kStride + j;
        *(fb_cvu*)(o) = m[r][0] - m[r][2];
        *(fb_cvu*)(o + kStride) = m[r][1] + m[r][2];
        *(fb_cvu*)(o + 2 * kStride) = m[r][2] - m[r][1];
        *(fb_cvu*)(o + 3 * kStride) = m[r][1] - m[r][3];
      }
    }
  }
}
static void fb_wino_input_rows(fb_i64 begin, fb_i64 end, void* data) {  // rows: (n, block)
  const FbWinograd& wg = *(const FbWinograd*)data;
  for (fb_i64 r = begin; r < end; ++r) fb_wino_input_block(wg, r / wg.blocks, r % wg.blocks, wg.V + r * 16 * wg.kStride);
}
// Two vectors of a row's even and odd columns, stored as the row (2 x kFbConvLanes floats).
static inline void fb_interleave_store(float* dst, fb_cv even, fb_cv odd) {
#if defined(__AVX512F__)
  *(fb_cv*)dst = __builtin_shufflevector(even, odd, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  *(fb_cv*)(dst + 16) = __builtin_shufflevector(even, odd, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
#else
  *(fb_cv*)dst = __builtin_shufflevector(even, odd, 0, 8, 1, 9, 2, 10, 3, 11);
  *(fb_cv*)(dst + 8) = __builtin_shufflevector(even, odd, 4, 12, 5, 13, 6, 14, 7, 15);
#endif
}
// One block of MR output channels (from o0; the first `first` already stored) on block b of image
// n's tiles: its 16 products, then A^T m A and the epilogue, output channel by output channel.
template <int MR, int NV>
static void fb_wino_tile(const FbWinograd& wg, const float* v, fb_i64 n, fb_i64 b, fb_i64 o0, fb_i64 first) {
  const FbConv& c = *wg.c;
  const fb_i64 NR = NV * kFbConvLanes, P = c.OH * c.OW, kStride = wg.kStride;
  const bool epilogue = fb_has_epilogue(c);
  const fb_i64 tap0 = 0;
  float m[16 * MR * NR] __attribute__((aligned(64)));  // the 16 products of one tile, k after k
  float rows[2][2 * NR] __attribute__((aligned(64)));  // one output channel's two rows of the tiles
  for (int k = 0; k < 16; ++k) {
    const float* wk = wg.U + k * wg.uStride + o0 * c.C;
    fb_direct_tile<MR, NV>(v + k * kStride, NR, &tap0, 1, c.C, wk, c.C, m + k * MR * NR, k < 15 ? wk + wg.uStride : 0, 0);
  }
  for (fb_i64 i = first; i < MR; ++i) {
    for (int j = 0; j < NV; ++j) {
      fb_cv q[16], s[2][4];
      for (int k = 0; k < 16; ++k) q[k] = *(const fb_cv*)(m + (k * MR + i) * NR + j * kFbConvLanes);
      for (int k = 0; k < 4; ++k) {  // A^T q
        s[0][k] = q[k] + q[4 + k] + q[8 + k];
        s[1][k] = q[4 + k] - q[8 + k] - q[12 + k];
      }
      for (int a = 0; a < 2; ++a)  // (A^T q) A, row a's even and odd columns
        fb_interleave_store(rows[a] + 2 * j * kFbConvLanes, s[a][0] + s[a][1] + s[a][2], s[a][1] - s[a][2] - s[a][3]);
    }
    fb_i64 o = o0 + i, yat = (n * c.O + o) * P;
    for (fb_i64 t = b * NR; t < b * NR + NR && t < wg.grid;) {  // the block's runs of tiles, tile row by tile row
      fb_i64 th = t / wg.Wq, tw = t % wg.Wq;
      if (tw >= wg.TW) { t = (th + 1) * wg.Wq; continue; }
      fb_i64 runEnd = th * wg.Wq + wg.TW < b * NR + NR ? th * wg.Wq + wg.TW : b * NR + NR;
      fb_i64 ow = 2 * tw, len = 2 * (runEnd - t) < c.OW - ow ? 2 * (runEnd - t) : c.OW - ow;
      for (fb_i64 a = 0; a < 2 && 2 * th + a < c.OH; ++a) {
        const float* src = rows[a] + 2 * (t - b * NR);
        fb_i64 at = yat + (2 * th + a) * c.OW + ow;
        if (epilogue) fb_conv_epilogue(c, o, at, src, len);
        else __builtin_memcpy(c.y + at, src, (fb_u64)len * sizeof(float));
      }
      t = runEnd;
    }
  }
}
// rows: (n, block of tiles), each transforming its block's input first and then running every
// block of output channels on it (tileMajor: U, read by every row, is the smaller), or (n, block
// of output channels, block of tiles) after a launch of the input transforms (U's piece stays in
// cache). The last block of channels starts MR back from the end, as fb_direct_tiles' does. In
// tile order, every row of a call puts its V in the place of the call's first row: one block's
// worth of memory a thread, which stays in its cache, instead of a place per block (3.3 MB for
// resnet18's 56x56 layers; the same speed on the model, less memory touched).
template <int MR, int NV>
static void fb_wino_tiles(const FbWinograd& wg, fb_i64 begin, fb_i64 end) {
  const fb_i64 O = wg.c->O;
  for (fb_i64 r = begin; r < end; ++r) {
    if (wg.tileMajor) {
      fb_i64 n = r / wg.blocks, b = r % wg.blocks;
      float* v = wg.V + begin * 16 * wg.kStride;
      fb_wino_input_block(wg, n, b, v);
      for (fb_i64 ob = 0; ob < wg.oblocks; ++ob) {
        fb_i64 o0 = fb_block_start(ob, MR, O);
        fb_wino_tile<MR, NV>(wg, v, n, b, o0, ob * MR - o0);
      }
    } else {
      fb_i64 n = r / (wg.oblocks * wg.blocks), ob = r / wg.blocks % wg.oblocks, b = r % wg.blocks;
      fb_i64 o0 = fb_block_start(ob, MR, O);
      fb_wino_tile<MR, NV>(wg, wg.V + (n * wg.blocks + b) * 16 * wg.kStride, n, b, o0, ob * MR - o0);
    }
  }
}
static void fb_wino_rows(fb_i64 begin, fb_i64 end, void* data) {
  const FbWinograd& wg = *(const FbWinograd*)data;
  fb_tile_shape(wg.mr, wg.nv, [&](auto mr, auto nv) { fb_wino_tiles<decltype(mr)::value, decltype(nv)::value>(wg, begin, end); });
}
// Positions per tile of a grid: the fewest wasted lanes, one vector counted 1.4x (its loads feed
// half as many multiply-adds); at most `most` vectors. narrowLast: the last of two or more tiles
// covers only what is left (fb_tile_nv).
static int fb_tile_vectors(fb_i64 grid, int most, bool narrowLast = false) {
  auto lanes = [](fb_i64 v) { return (double)(v * kFbConvLanes) * (v == 1 ? 1.4 : v == 2 ? 1.03 : 1.0); };
  double best = 0;
  int nv = 1;
  for (int v = 1; v <= most; ++v) {
    fb_i64 nr = v * kFbConvLanes, tiles = (grid + nr - 1) / nr, left = grid - (tiles - 1) * nr;
    double cost = narrowLast && tiles >= 2 ? (double)(tiles - 1) * lanes(v) + lanes((left + kFbConvLanes - 1) / kFbConvLanes)
                                           : (double)tiles * lanes(v);
    if (v == 1 || cost <= best) { best = cost; nv = v; }
  }
  return nv;
}
// Whether Winograd beats the direct convolution, in cycles per (o, c) pair on one core: the
// direct tiles do 9 multiply-adds per grid position (OH x (OW + 2)), Winograd 16 per tile
// position plus about a tenth for its input and output transforms, two fused multiply-adds of
// kFbConvLanes a cycle. The weight transform costs about 30 cycles a pair (one Zen 5 core)
// however many images share it, or, where the transformed weights are cached (`cached`: the
// weights are a module input), reading 16 floats a pair instead of 9. resnet18's 7x7 layers stay
// direct: a grid of 20 tiles in 32 lanes is 0.9 of the direct's multiply-adds.
static bool fb_wino_pays(const FbConv& c, bool cached) {
  fb_i64 TH = (c.OH + 1) / 2, Wq = (c.OW + 1) / 2 + 1, grid = TH * Wq, dgrid = c.OH * (c.OW + 2);
  fb_i64 nr = fb_tile_vectors(grid, 3) * kFbConvLanes, dnr = fb_tile_vectors(dgrid, 3) * kFbConvLanes;
  double lanesPerCycle = 2.0 * kFbConvLanes;
  double direct = c.N * 9.0 * ((dgrid + dnr - 1) / dnr * dnr) / lanesPerCycle;
  double wino = c.N * 1.1 * 16.0 * ((grid + nr - 1) / nr * nr) / lanesPerCycle + (cached ? 2.0 : 30.0);
  return wino < direct;
}
// `version`: rt->version of w, which the caller asked to decide whether Winograd pays.
static void fb_conv_winograd(const FuseboxRuntime* rt, int kernel, const FbConv& c, const float* w, fb_i64 version, bool turned,
                             float* scratch) {
  FbWinograd wg;
  wg.c = &c;
  wg.w = w;
  wg.turned = turned;
  wg.TH = (c.OH + 1) / 2;
  wg.TW = (c.OW + 1) / 2;
  wg.Hq = wg.TH + 1;
  wg.Wq = wg.TW + 1;
  wg.grid = wg.TH * wg.Wq;
  wg.nv = fb_tile_vectors(wg.grid, 3);
  wg.NR = wg.nv * kFbConvLanes;
  wg.blocks = (wg.grid + wg.NR - 1) / wg.NR;
  wg.mr = fb_tile_rows(c.O);
  wg.oblocks = (c.O + wg.mr - 1) / wg.mr;
  wg.kStride = c.C * wg.NR + kFbWinoSkew;
  wg.uStride = c.O * c.C + kFbWinoSkew;
  wg.X = scratch;
  wg.V = wg.X + c.N * c.C * 4 * wg.Hq * wg.Wq + 4 * kFbConvLanes;
  wg.U = wg.V + c.N * wg.blocks * 16 * wg.kStride;
  // As fb_conv_direct's order: the smaller of U and one image's V stays in cache.
  wg.tileMajor = c.O < wg.blocks * wg.NR * (rt->threads(rt->ctx, kernel) > 1 ? 4 : 1);
  // U stays in the scratch from call to call: transformed again only when the weights are not the
  // same module input as last time, unwritten since (inference: once).
  FbWinoKey key{(fb_i64)w, version, turned}, last;
  float* keyAt = wg.U + 16 * wg.uStride;
  __builtin_memcpy(&last, keyAt, sizeof last);
  if (key.version < 0 || last.weights != key.weights || last.version != key.version || last.turned != key.turned) {
    rt->launch(rt->ctx, kernel, fb_wino_weight_rows, c.O, &wg);
    if (key.version < 0) key.weights = 0;  // matches no later call
    __builtin_memcpy(keyAt, &key, sizeof key);
  }
  rt->launch(rt->ctx, kernel, fb_wino_pad_rows, c.N * c.C, &wg);
  if (wg.tileMajor) {
    rt->launch(rt->ctx, kernel, fb_wino_rows, c.N * wg.blocks, &wg);
  } else {
    rt->launch(rt->ctx, kernel, fb_wino_input_rows, c.N * wg.blocks, &wg);
    rt->launch(rt->ctx, kernel, fb_wino_rows, c.N * wg.oblocks * wg.blocks, &wg);
  }
}
// Whether a convolution forward runs here: taps within kFbDirectTaps (its caller checks the scratch).
static bool fb_direct_fits(const FbConv& c) { return c.KH * c.KW <= kFbDirectTaps; }
static void fb_conv_direct(const FuseboxRuntime* rt, int kernel, const FbConv& c, float* scratch) {
  if (!c.exact && fb_wino_fits(c)) {
    fb_i64 version = rt->version(rt->ctx, c.w);
    if (fb_wino_pays(c, version >= 0)) {
      fb_conv_winograd(rt, kernel, c, c.w, version, false, scratch);
      return;
    }
  }
  FbDirectConv d;
  d.c = &c;
  d.xp = scratch;
  fb_direct_scratch(c, d.Hq, d.Wq);
  // A 1x1 kernel reads phase (0, 0) alone: a stride-2 one (resnet's downsamples) copied four
  // times the input it reads.
  d.onePhase = c.KH == 1 && c.KW == 1;
  d.chan = (d.onePhase ? 1 : c.sh * c.sw) * d.Hq * d.Wq;
  d.image = c.C * d.chan;
  d.cpg = c.C / c.groups;
  d.opg = c.O / c.groups;
  d.nt = fb_phase_taps(c, d.Hq, d.Wq, d.taps);
  d.K = d.cpg * d.nt;
  d.grid = c.OH * d.Wq;
  // A 1x1 convolution of stride 1 without padding reads its input in place (its phase planes
  // would be a plain copy, in a launch of its own): 35 of mobilenet_v2's convolutions, and every
  // matmul that runs here. Its tiles must then fit the grid.
  bool inPlace = c.KH == 1 && c.KW == 1 && c.sh == 1 && c.sw == 1 && c.ph == 0 && c.pw == 0 && d.grid >= kFbConvLanes;
  d.mr = fb_tile_rows(d.opg);
  d.oblocks = (d.opg + d.mr - 1) / d.mr;
  // Whichever of the weights and the padded image is larger is read once, the smaller one stays
  // in cache: tile after tile under one block of weights re-reads the whole image per block
  // (resnet18's 56x56 layers: 8 x 0.9 MB), block after block on one tile re-reads all weights.
  // Threads split the rows: in block order each re-reads the whole image for its blocks, in tile
  // order each reads only its tiles, so with more than one, tile order wins up to weights 4x the
  // image (two Zen 5 cores: resnet18's 128 -> 128 3x3 at 28x28, weights 1.3x the image, 0.87 ->
  // 0.70 ms; 128 -> 256 at stride 2, 2.6x, 0.54 -> 0.44 ms; 256 -> 512 at stride 2, 18x, 0.49
  // in block order, 0.54 in tile order).
  d.tileMajor = c.O * d.K < d.image * (rt->threads(rt->ctx, kernel) > 1 ? 4 : 1);
  // Tiles of 2 vectors rather than 3 where only those fit fb_direct_tiles' in-tile pack: a 576 ->
  // 96 1x1 at 14x14 ran 0.11 ms in packed tiles of 32 and 0.14 in unpacked ones of 48.
  int most = inPlace && d.grid < 3 * kFbConvLanes ? (int)(d.grid / kFbConvLanes) : 3;
  if (most == 3 && !fb_tile_packs(d, 3 * kFbConvLanes) && fb_tile_packs(d, 2 * kFbConvLanes)) most = 2;
  d.nv = fb_tile_vectors(d.grid, most, true);
  d.tiles = (d.grid + d.nv * kFbConvLanes - 1) / (d.nv * kFbConvLanes);
  // A 1x1 read in place whose tiles several blocks of channels read, and that fb_direct_tiles
  // does not pack itself (block order, or more channels than its stack holds): every tile's
  // pieces copied together first, so each is one contiguous, aligned stream where it was one
  // short piece per input channel, a plane apart. Only for images of 256 KB to 1 MB (out of L2)
  // that 8 or more blocks re-read: squeezenet's 512 -> 1000 at 13x13 (346 KB, 125 blocks), 0.65 ->
  // 0.56 ms on two Zen 5 cores. Smaller ones lost the extra launch (mobilenet_v2's 960 -> 320 at
  // 7x7, 188 KB: 0.14 -> 0.15 ms), larger ones the copy (ConvNeXt's 768 x 3072 weights read as the
  // image of a matmul by 7 blocks: 0.20 -> 0.26 ms).
  fb_i64 NR = d.nv * kFbConvLanes, floats = c.N * d.image;
  d.packed = inPlace && scratch && d.oblocks >= 8 && floats >= kFbPackImage && floats <= 4 * kFbPackImage &&
             !fb_tile_packs(d, NR);
  if (d.packed) {
    d.xp = scratch;
    rt->launch(rt->ctx, kernel, fb_direct_pack_rows, c.N * c.groups * d.tiles, &d);
  } else if (inPlace) {
    d.xp = (float*)c.x;  // read only
  } else {
    rt->launch(rt->ctx, kernel, fb_direct_pad_rows, c.N * c.C, &d);
    __builtin_memset(d.xp + c.N * d.image, 0, (fb_u64)(d.Wq + 4 * kFbConvLanes) * sizeof(float));
  }
  rt->launch(rt->ctx, kernel, fb_direct_rows, c.N * c.groups * d.oblocks * d.tiles, &d);
}
// C[1 x m] = a[1 x k] @ B^T with B m x k row-major (a linear layer on one row: classifier heads):
// one dot product per output, four outputs at a time sharing the loads of a. sgemm packed all of
// B first for a single row (mobilenet_v2's 1280 -> 1000 head: 0.39 ms, twice onnxruntime's).
struct FbGemv { const float* a; const float* B; float* c; fb_i64 m, k; };
static void fb_gemv_rows(fb_i64 begin, fb_i64 end, void* data) {  // rows: blocks of 4 outputs
  const FbGemv& g = *(const FbGemv*)data;
  for (fb_i64 blk = begin; blk < end; ++blk) {
    fb_i64 j0 = blk * 4, nj = g.m - j0 < 4 ? g.m - j0 : 4;
    const float* b[4];  // rows past m repeat the last one, computed and not stored
    for (int r = 0; r < 4; ++r) b[r] = g.B + (j0 + (r < nj ? r : nj - 1)) * g.k;
    fb_cv acc[4];
    for (int r = 0; r < 4; ++r) acc[r] = 0.0f;
    fb_i64 t = 0;
    for (; t + kFbConvLanes <= g.k; t += kFbConvLanes) {
      fb_cv av = *(const fb_cvu*)(g.a + t);
      for (int r = 0; r < 4; ++r) acc[r] += av * *(const fb_cvu*)(b[r] + t);
    }
    for (int r = 0; r < nj; ++r) {
      float sum = 0.0f;
      for (int i = 0; i < kFbConvLanes; ++i) sum += acc[r][i];
      for (fb_i64 u = t; u < g.k; ++u) sum += g.a[u] * b[r][u];
      g.c[j0 + r] = sum;
    }
  }
}
static void fb_gemv(const FuseboxRuntime* rt, int kernel, const FbMatmul& p) {
  FbGemv g{p.A, p.B, p.C, p.m, p.k};
  rt->launch(rt->ctx, kernel, fb_gemv_rows, (p.m + 3) / 4, &g);
}
// The input gradient of a convolution of stride 1 is the output gradient convolved, padded by
// (K-1)*d - p, with the kernel turned by 180 degrees and its channel roles swapped: dx[n][c] =
// sum over o and taps of gy[n][o] * w[o][c][KH-1-kh][KW-1-kw]; a direct convolution like the
// forward's, after one re-layout of the weights into wt[c][o][taps].
// Rows: blocks of kFbTurnBlock input channels c, each read as one contiguous piece of every w[o]
// and written as that many sequential streams. Channel by channel, every read was a cache line of
// its own (w[o] is C*taps floats apart): a 512x512 3x3 kernel took 1.4 ms, as long as the
// convolution after it; 0.7 ms now, the bandwidth of reading and writing it once. (Reading the
// kernel in place from the tiles instead made them 1.8x slower: 8 rows of a tile, 9 taps each,
// then a jump of C*9 floats per input channel.)
struct FbTurn { const float* w; float* wt; fb_i64 O, C, taps; };
static const fb_i64 kFbTurnBlock = 16;
static void fb_turn_rows(fb_i64 begin, fb_i64 end, void* data) {
  const FbTurn& t = *(const FbTurn*)data;
  for (fb_i64 blk = begin; blk < end; ++blk) {
    fb_i64 c0 = blk * kFbTurnBlock, nc = t.C - c0 < kFbTurnBlock ? t.C - c0 : kFbTurnBlock;
    for (fb_i64 o = 0; o < t.O; ++o) {
      const float* src = t.w + (o * t.C + c0) * t.taps;
      for (fb_i64 j = 0; j < nc; ++j)
        for (fb_i64 k = 0; k < t.taps; ++k) t.wt[((c0 + j) * t.O + o) * t.taps + k] = src[j * t.taps + t.taps - 1 - k];
    }
  }
}
static bool fb_direct_input_grad_fits(const FbConv& c) {
  return c.sh == 1 && c.sw == 1 && c.groups == 1 && (c.KH - 1) * c.dh >= c.ph && (c.KW - 1) * c.dw >= c.pw && fb_direct_fits(c);
}
// Scratch: the gradient's padded copy (fb_direct_scratch of the turned convolution), then wt;
// cpp_codegen.cpp's directInputGradScratchFloats mirrors it.
static void fb_conv_direct_input_grad(const FuseboxRuntime* rt, int kernel, const FbConv& c, float* scratch) {
  FbConv t{c.x, 0, c.y, c.N, c.O, c.OH, c.OW, c.C, c.KH, c.KW, c.H, c.W, 1, 1, 1,
           (c.KH - 1) * c.dh - c.ph, (c.KW - 1) * c.dw - c.pw, c.dh, c.dw};
  if (fb_wino_fits(t)) {
    fb_i64 version = rt->version(rt->ctx, c.w);
    if (fb_wino_pays(t, version >= 0)) {  // the weight transform reads the kernel turned
      fb_conv_winograd(rt, kernel, t, c.w, version, true, scratch);
      return;
    }
  }
  fb_i64 Hq, Wq;
  float* wt = scratch + fb_direct_scratch(t, Hq, Wq);
  FbTurn turn{c.w, wt, c.O, c.C, c.KH * c.KW};
  rt->launch(rt->ctx, kernel, fb_turn_rows, (c.C + kFbTurnBlock - 1) / kFbTurnBlock, &turn);
  t.w = wt;
  fb_conv_direct(rt, kernel, t, scratch);
}

#if FB_HAVE_CBLAS
// Convolutions as one sgemm over the whole batch: col[(ci*KH + kh)*KW + kw][n*P + p] holds the
// input pixel each tap sees (P = OH*OW), so y'[o][n*P + p] = W[o] . col[:, n*P + p].
struct FbIm2col { const FbConv* c; float* col; float* other; };
// One output row of one tap: zeros left of lo and from hi on, the input between (S: the stride
// when known at compile time, so the copy vectorizes; 0: c.sw).
template <int S>
static inline void fb_im2col_line(float* __restrict o, const float* __restrict xr, fb_i64 lo, fb_i64 hi, fb_i64 OW, fb_i64 sw) {
  fb_i64 s = S > 0 ? S : sw;
  for (fb_i64 ow = 0; ow < lo; ++ow) o[ow] = 0.0f;
  if (S == 1) __builtin_memcpy(o + lo, xr + lo, (fb_u64)(hi - lo) * sizeof(float));
  else for (fb_i64 ow = lo; ow < hi; ++ow) o[ow] = xr[ow * s];
  for (fb_i64 ow = hi; ow < OW; ++ow) o[ow] = 0.0f;
}
template <int S>
static void fb_im2col_taps(const FbConv& c, float* col, fb_i64 begin, fb_i64 end) {
  fb_i64 P = c.OH * c.OW, NP = c.N * P;
  for (fb_i64 r = begin; r < end; ++r) {
    fb_i64 ci = r / (c.KH * c.KW), kh = (r / c.KW) % c.KH, kw = r % c.KW;
    fb_i64 lo, hi, off = kw * c.dw - c.pw;
    fb_valid_cols(kw, c.W, c.OW, c.sw, c.pw, c.dw, lo, hi);
    for (fb_i64 n = 0; n < c.N; ++n) {
      const float* plane = c.x + (n * c.C + ci) * c.H * c.W + off;
      float* out = col + r * NP + n * P;
      for (fb_i64 oh = 0; oh < c.OH; ++oh) {
        float* o = out + oh * c.OW;
        fb_i64 ih = oh * c.sh - c.ph + kh * c.dh;
        if (ih < 0 || ih >= c.H) __builtin_memset(o, 0, (fb_u64)c.OW * sizeof(float));
        else fb_im2col_line<S>(o, plane + ih * c.W, lo, hi, c.OW, c.sw);
      }
    }
  }
}
static void fb_im2col_rows(fb_i64 begin, fb_i64 end, void* data) {  // rows: (ci, kh, kw)
  const FbIm2col& a = *(const FbIm2col*)data;
  const FbConv& c = *a.c;
  if (c.sw == 1) fb_im2col_taps<1>(c, a.col, begin, end);
  else if (c.sw == 2) fb_im2col_taps<2>(c, a.col, begin, end);
  else fb_im2col_taps<0>(c, a.col, begin, end);
}
// col2im: dx[n][ci] += every tap's column entry (rows: (n, ci) planes, so writes are disjoint);
// S as in fb_im2col_taps.
template <int S>
static void fb_col2im_planes(const FbIm2col& a, fb_i64 begin, fb_i64 end) {
  const FbConv& c = *a.c;
  fb_i64 P = c.OH * c.OW, NP = c.N * P, s = S > 0 ? S : c.sw;
  for (fb_i64 pl = begin; pl < end; ++pl) {
    fb_i64 n = pl / c.C, ci = pl % c.C;
    float* dx = a.other + pl * c.H * c.W;
    for (fb_i64 i = 0; i < c.H * c.W; ++i) dx[i] = 0.0f;
    for (fb_i64 kh = 0; kh < c.KH; ++kh)
      for (fb_i64 kw = 0; kw < c.KW; ++kw) {
        const float* col = a.col + ((ci * c.KH + kh) * c.KW + kw) * NP + n * P;
        fb_i64 lo, hi, off = kw * c.dw - c.pw;
        fb_valid_cols(kw, c.W, c.OW, c.sw, c.pw, c.dw, lo, hi);
        for (fb_i64 oh = 0; oh < c.OH; ++oh) {
          fb_i64 ih = oh * c.sh - c.ph + kh * c.dh;
          if (ih < 0 || ih >= c.H) continue;
          float* __restrict d = dx + ih * c.W + off;
          const float* __restrict from = col + oh * c.OW;
          for (fb_i64 ow = lo; ow < hi; ++ow) d[ow * s] += from[ow];
        }
      }
  }
}
static void fb_col2im_rows(fb_i64 begin, fb_i64 end, void* data) {
  const FbIm2col& a = *(const FbIm2col*)data;
  if (a.c->sw == 1) fb_col2im_planes<1>(a, begin, end);
  else if (a.c->sw == 2) fb_col2im_planes<2>(a, begin, end);
  else fb_col2im_planes<0>(a, begin, end);
}
// [N, O, P] <-> [O, N*P] (rows: o).
struct FbRelayout { const float* src; float* dst; fb_i64 N, O, P; int toNchw; };
static void fb_relayout_rows(fb_i64 begin, fb_i64 end, void* data) {
  const FbRelayout& r = *(const FbRelayout*)data;
  for (fb_i64 o = begin; o < end; ++o)
    for (fb_i64 n = 0; n < r.N; ++n)
      for (fb_i64 p = 0; p < r.P; ++p) {
        if (r.toNchw) r.dst[(n * r.O + o) * r.P + p] = r.src[o * r.N * r.P + n * r.P + p];
        else r.dst[o * r.N * r.P + n * r.P + p] = r.src[(n * r.O + o) * r.P + p];
      }
}
// The output gradient gy [N, O, P] as the GEMM's [O, N*P]: itself for one image, else re-laid out
// into `lay`.
static const float* fb_gy_columns(const FuseboxRuntime* rt, int kernel, const FbConv& c, const float* gy, float* lay) {
  if (c.N == 1) return gy;
  FbRelayout r{gy, lay, c.N, c.O, c.OH * c.OW, 0};
  rt->launch(rt->ctx, kernel, fb_relayout_rows, c.O, &r);
  return lay;
}
static void fb_epilogue_rows(fb_i64 begin, fb_i64 end, void* data) {  // rows: (n, o), in place
  const FbConv& c = *(const FbConv*)data;
  for (fb_i64 no = begin; no < end; ++no) fb_conv_epilogue(c, no % c.O, no * c.OH * c.OW, c.y + no * c.OH * c.OW, c.OH * c.OW);
}
// mode 0: y = conv(x, w); 1: dx from (gy in c.x, w); 2: dw from (x, gy in c.w).
extern "C" void fb_conv_gemm(const FuseboxRuntime* rt, int kernel, FbConv c, int mode, float* scratch) {
  fb_i64 P = c.OH * c.OW, NP = c.N * P, CKK = c.C * c.KH * c.KW;
  float* col = scratch;
  float* lay = scratch + CKK * NP;  // [O, N*P]
  if (mode == 0 && fb_direct_fits(c)) {  // 1x1 too: its tiles beat sgemm with its packing
    fb_conv_direct(rt, kernel, c, scratch);
    return;
  }
  if (mode == 1 && fb_direct_input_grad_fits(c)) {
    fb_conv_direct_input_grad(rt, kernel, c, scratch);
    return;
  }
  // The input gradient of a 1x1 convolution of stride 1 without padding: each dx[n] = W^T @ gy[n]
  // (gy[n] is already its own column matrix [O, P]) needs neither col2im nor a re-layout.
  bool pointwise = c.KH == 1 && c.KW == 1 && c.sh == 1 && c.sw == 1 && c.ph == 0 && c.pw == 0 && c.OH == c.H && c.OW == c.W;
  if (pointwise && mode == 1) {
    for (fb_i64 n = 0; n < c.N; ++n)
      fb_gemm(rt, kernel, FbGemm{1, 0, c.C, P, c.O, c.w, c.C, c.x + n * c.O * P, P, c.y + n * c.C * P, P});
    return;
  }
  if (mode == 0 && c.N == 1) lay = c.y;  // one image: [O, N*P] is y's own layout
  if (mode == 0) {
    FbIm2col a{&c, col, 0};
    rt->launch(rt->ctx, kernel, fb_im2col_rows, CKK, &a);
    fb_gemm(rt, kernel, FbGemm{0, 0, c.O, NP, CKK, c.w, CKK, col, NP, lay, NP});
    if (lay != c.y) {
      FbRelayout r{lay, c.y, c.N, c.O, P, 1};
      rt->launch(rt->ctx, kernel, fb_relayout_rows, c.O, &r);
    }
    if (fb_has_epilogue(c)) rt->launch(rt->ctx, kernel, fb_epilogue_rows, c.N * c.O, &c);
  } else if (mode == 1) {
    const float* gy = fb_gy_columns(rt, kernel, c, c.x, lay);
    fb_gemm(rt, kernel, FbGemm{1, 0, CKK, NP, c.O, c.w, CKK, gy, NP, col, NP});  // dcol = W^T @ gy'
    FbIm2col a{&c, col, c.y};
    rt->launch(rt->ctx, kernel, fb_col2im_rows, c.N * c.C, &a);
  } else {
    FbIm2col a{&c, col, 0};
    rt->launch(rt->ctx, kernel, fb_im2col_rows, CKK, &a);
    const float* gy = fb_gy_columns(rt, kernel, c, c.w, lay);
    fb_gemm(rt, kernel, FbGemm{0, 1, c.O, CKK, NP, gy, NP, col, NP, c.y, CKK});  // dW = gy' @ col^T
  }
}
#endif

// ---- extern: pooling and its gradients (rows are (n, c) planes) ------------------------
// Max and average pooling forward, a row of outputs at a time: each tap updates the whole row over
// its in-bounds columns (fb_valid_cols), so the inner loop has no bounds checks and vectorizes.
// Same order of taps (and so the same sums and the same NaN handling) as the per-element loop.
static void fb_pool_forward_plane(const FbPool& p, fb_i64 pl) {
  bool mx = p.mode == 0;
  float count = (float)(p.kh * p.kw);
  const float* x = p.x + pl * p.H * p.W;
  for (fb_i64 oh = 0; oh < p.OH; ++oh) {
    float* __restrict o = p.y + (pl * p.OH + oh) * p.OW;
    for (fb_i64 ow = 0; ow < p.OW; ++ow) o[ow] = mx ? -__builtin_inff() : 0.0f;
    for (fb_i64 kh = 0; kh < p.kh; ++kh) {
      fb_i64 ih = oh * p.sh - p.ph + kh;
      if (ih < 0 || ih >= p.H) continue;
      for (fb_i64 kw = 0; kw < p.kw; ++kw) {
        fb_i64 lo, hi;
        fb_valid_cols(kw, p.W, p.OW, p.sw, p.pw, 1, lo, hi);
        const float* __restrict xr = x + ih * p.W + kw - p.pw;
        if (mx) {
          for (fb_i64 ow = lo; ow < hi; ++ow) o[ow] = fb_max(xr[ow * p.sw], o[ow]);
        } else {
          for (fb_i64 ow = lo; ow < hi; ++ow) o[ow] += xr[ow * p.sw];
        }
      }
    }
    if (!mx)
      for (fb_i64 ow = 0; ow < p.OW; ++ow) o[ow] = o[ow] / count;
  }
}
// The same from a copy of the plane padded with the value that changes nothing (-inf for max, 0
// for the sum) and split by column stride phase as the depthwise convolution's: every tap reads
// contiguous columns, no gathers at stride 2. 16 output columns at a time held in registers over
// every tap (resnet18's 3x3/2 max pool: 0.26 -> 0.12 ms against a row updated in memory tap by
// tap). The copy's padding is written once per call (planes only overwrite the interior).
// Padding taps fold in the neutral value, so the results are those of fb_pool_forward_plane.
static const fb_i64 kFbPoolPlane = 24576;  // floats of the padded copy, on the stack
static fb_i64 fb_pool_phase_width(const FbPool& p) {
  fb_i64 width = (p.W + 2 * p.pw + p.sw - 1) / p.sw, reach = p.OW + (p.kw - 1) / p.sw;
  return (width > reach ? width : reach) + 16;  // the last vector of columns reads past OW
}
static bool fb_pool_phases_fit(const FbPool& p) {
  return p.sw * (p.H + 2 * p.ph) * fb_pool_phase_width(p) <= kFbPoolPlane && p.sh * (p.OH - 1) + p.kh <= p.H + 2 * p.ph &&
         p.kw <= kFbDepthwiseTaps;
}
static void fb_pool_fill_phases(const FbPool& p, float* padded) {
  float fill = p.mode == 0 ? -__builtin_inff() : 0.0f;
  for (fb_i64 i = 0; i < p.sw * (p.H + 2 * p.ph) * fb_pool_phase_width(p); ++i) padded[i] = fill;
}
// R output rows from oh on, a vector of columns at a time: R independent chains keep the vector unit busy
// (one row's chain of compare-and-blend, tap after tap, is latency bound). MX: max, else the sum.
template <int R, bool MX>
static void fb_pool_phase_rows(const FbPool& p, fb_i64 pl, fb_i64 oh, const float* padded, const fb_i64* at, fb_i64 pwidth) {
  const float fill = MX ? -__builtin_inff() : 0.0f, count = (float)(p.kh * p.kw);
  for (fb_i64 ow = 0; ow < p.OW; ow += kFbConvLanes) {
    fb_cv acc[R];
    for (int r = 0; r < R; ++r) acc[r] = fill;
    for (fb_i64 kh = 0; kh < p.kh; ++kh)
      for (fb_i64 kw = 0; kw < p.kw; ++kw)
        for (int r = 0; r < R; ++r) {
          fb_cv v = *(const fb_cvu*)(padded + ((oh + r) * p.sh + kh) * pwidth + at[kw] + ow);
          if (MX) acc[r] = fb_max_lanes(v, acc[r]);
          else acc[r] += v;
        }
    for (int r = 0; r < R; ++r) {
      float* __restrict o = p.y + (pl * p.OH + oh + r) * p.OW;
      if (!MX) acc[r] = acc[r] / count;
      if (ow + kFbConvLanes <= p.OW) *(fb_cvu*)(o + ow) = acc[r];
      else for (fb_i64 i = 0; i < p.OW - ow; ++i) o[ow + i] = acc[r][i];
    }
  }
}
template <bool MX>
static void fb_pool_phase_plane(const FbPool& p, fb_i64 pl, const float* padded, const fb_i64* at, fb_i64 pwidth) {
  fb_i64 oh = 0;
  for (; oh + 4 <= p.OH; oh += 4) fb_pool_phase_rows<4, MX>(p, pl, oh, padded, at, pwidth);
  for (; oh < p.OH; ++oh) fb_pool_phase_rows<1, MX>(p, pl, oh, padded, at, pwidth);
}
// at: where tap kw of output column 0 reads, from its row's start (fb_pool_rows, once per call).
static void fb_pool_forward_phases(const FbPool& p, fb_i64 pl, float* padded, const fb_i64* at, fb_i64 pwidth) {
  fb_i64 Hp = p.H + 2 * p.ph;
  const float* x = p.x + pl * p.H * p.W;
  for (fb_i64 ih = 0; ih < p.H; ++ih) fb_split_row(x + ih * p.W, p.W, p.pw, p.sw, padded + (ih + p.ph) * pwidth, Hp * pwidth, p.sw);
  if (p.mode == 0) fb_pool_phase_plane<true>(p, pl, padded, at, pwidth);
  else fb_pool_phase_plane<false>(p, pl, padded, at, pwidth);
}
#if defined(__AVX512F__)
// Max and average pooling 16 planes at a time, the lanes planes (the bands of the depthwise
// convolution, padded with the neutral value): every tap of a position is one aligned vector,
// with no phase-split copy (two thirds of a 3x3/2 max pool's time on the plane path). Same taps in
// the same order as fb_pool_forward_plane: the same sums and NaN handling.
static FbBand16 fb_pool16_band(const FbPool& p) {
  return FbBand16(p.H, p.W, p.ph, p.pw, p.sh, p.kh, p.OH, p.OW, p.mode == 0 ? -__builtin_inff() : 0.0f);
}
static bool fb_pool16_fits(const FbPool& p) {
  return (p.mode == 0 || p.mode == 1) && p.sh * (p.OH - 1) + p.kh <= p.H + 2 * p.ph && p.sw * (p.OW - 1) + p.kw <= p.W + 2 * p.pw &&
         p.sw <= kFbDw16Stride && fb_pool16_band(p).fits();
}
template <bool MX>
static void fb_pool16_row(const FbPool& p, const float* __restrict band, fb_i64 cols, fb_i64 rows, float* __restrict out) {
  const int B = kFbDw16Block;
  const fb_cv fill = MX ? -__builtin_inff() : 0.0f;
  const float count = (float)(p.kh * p.kw);
  for (fb_i64 ow0 = 0; ow0 < p.OW; ow0 += B) {  // the last block reads past OW into the slack, unstored
    fb_cv acc[B];
    for (int b = 0; b < B; ++b) acc[b] = fill;
    for (fb_i64 kh = 0; kh < p.kh; ++kh) {
      const float* r = band + ((rows + kh) * cols + ow0 * p.sw) * 16;
      for (fb_i64 kw = 0; kw < p.kw; ++kw)
        for (int b = 0; b < B; ++b) {
          fb_cv v = *(const fb_cv*)(r + (b * p.sw + kw) * 16);
          if (MX) acc[b] = fb_max_lanes(v, acc[b]);
          else acc[b] += v;
        }
    }
    for (int b = 0; b < B; ++b) *(fb_cv*)(out + (ow0 + b) * 16) = MX ? acc[b] : acc[b] / count;
  }
}
// Rows: planes; a row that starts a block of 16 planes does the block.
static void fb_pool16_rows(const FbPool& p, fb_i64 begin, fb_i64 end) {
  const FbBand16 g = fb_pool16_band(p);
  float band[kFbDw16Band + kFbDw16Slack] __attribute__((aligned(64)));
  float out[kFbDw16Row] __attribute__((aligned(64)));
  g.clear(band, out);
  for (fb_i64 pl0 = begin; pl0 < end; ++pl0) {
    if (pl0 % 16) continue;
    FbBand16::Block blk = g.planes(p.x, p.y, pl0, p.planes);
    if (p.mode == 0) g.run(blk, band, out, [&](const float* b, fb_i64 rows, float* o) { fb_pool16_row<true>(p, b, g.cols, rows, o); });
    else g.run(blk, band, out, [&](const float* b, fb_i64 rows, float* o) { fb_pool16_row<false>(p, b, g.cols, rows, o); });
  }
}
#endif
#if defined(__AVX512F__)
// Max pooling 3 columns wide at column stride 2 (resnet's, squeezenet's and GoogLeNet's 3x3/2
// pools) straight from the planes, without the bands' transposes or a phase-split copy: for 16
// outputs of a row, the window's input rows are combined lane by lane (contiguous vectors), then
// the even, odd and next even columns are picked by permutes. Columns outside the plane read
// -inf (masked loads), rows outside it are skipped: the padding changes no max. The taps combine
// rows first, columns second: the same maxima as fb_pool_forward_plane's order, a NaN anywhere in
// a window its result as there.
static bool fb_pool_w3s2_fits(const FbPool& p) { return p.mode == 0 && p.kw == 3 && p.sw == 2 && p.pw <= 2; }
// Columns c .. c + 15 of a row, -inf outside [0, W) (never read there).
static inline fb_cv fb_pool_cols(const float* row, fb_i64 c, fb_i64 W) {
  fb_i64 lo = c < 0 ? -c : 0, hi = W - c < 16 ? W - c : 16;
  if (lo == 0 && hi == 16) return *(const fb_cvu*)(row + c);
  if (hi <= lo) return (fb_cv)(-__builtin_inff());
  unsigned m = ((1u << hi) - 1) & ~((1u << lo) - 1);
  return (fb_cv)__builtin_ia32_loadups512_mask(row + c, (fb_v16sf)(fb_cv)(-__builtin_inff()), (unsigned short)m);
}
static void fb_pool_w3s2_rows(const FbPool& p, fb_i64 begin, fb_i64 end) {
  for (fb_i64 pl = begin; pl < end; ++pl) {
    const float* x = p.x + pl * p.H * p.W;
    float* y = p.y + pl * p.OH * p.OW;
    for (fb_i64 oh = 0; oh < p.OH; ++oh) {
      fb_i64 h0 = oh * p.sh - p.ph, h1 = h0 + p.kh;
      if (h0 < 0) h0 = 0;
      if (h1 > p.H) h1 = p.H;
      for (fb_i64 ow0 = 0; ow0 < p.OW; ow0 += 16) {
        fb_i64 c0 = 2 * ow0 - p.pw;  // the first input column of output ow0's window
        fb_cv a = -__builtin_inff(), b = a;
        float c = -__builtin_inff();  // column c0 + 32: the last output's next even column
        for (fb_i64 ih = h0; ih < h1; ++ih) {
          const float* r = x + ih * p.W;
          a = fb_max_lanes(fb_pool_cols(r, c0, p.W), a);
          b = fb_max_lanes(fb_pool_cols(r, c0 + 16, p.W), b);
          if (c0 + 32 >= 0 && c0 + 32 < p.W) c = fb_max(r[c0 + 32], c);
        }
        fb_cv even = __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        fb_cv odd = __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
        fb_cv next = __builtin_shufflevector(a, b, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 0);
        next[15] = c;
        fb_cv m = fb_max_lanes(next, fb_max_lanes(odd, even));
        fb_i64 n = p.OW - ow0 < 16 ? p.OW - ow0 : 16;
        fb_store_lanes(y + oh * p.OW + ow0, m, n);
      }
    }
  }
}
#endif
extern "C" void fb_pool_rows(fb_i64 begin, fb_i64 end, void* data) {
  const FbPool& p = *(const FbPool*)data;
  int mode = p.mode % 10;
  bool grad = p.mode >= 10;
#if defined(__AVX512F__)
  if (!grad && fb_pool_w3s2_fits(p)) {
    fb_pool_w3s2_rows(p, begin, end);
    return;
  }
  if (!grad && fb_pool16_fits(p)) {
    fb_pool16_rows(p, begin, end);
    return;
  }
#endif
  float padded[kFbPoolPlane];
  bool phases = !grad && mode != 2 && fb_pool_phases_fit(p);
  fb_i64 pwidth = phases ? fb_pool_phase_width(p) : 0, at[kFbDepthwiseTaps];
  if (phases) {
    fb_pool_fill_phases(p, padded);
    for (fb_i64 kw = 0; kw < p.kw; ++kw) at[kw] = (kw % p.sw) * (p.H + 2 * p.ph) * pwidth + kw / p.sw;
  }
  for (fb_i64 pl = begin; pl < end; ++pl) {
    if (!grad && mode != 2) {
      if (phases) fb_pool_forward_phases(p, pl, padded, at, pwidth);
      else fb_pool_forward_plane(p, pl);
      continue;
    }
    const float* x = p.x ? p.x + pl * p.H * p.W : 0;
    if (grad) {
      float* dx = p.y + pl * p.H * p.W;
      for (fb_i64 i = 0; i < p.H * p.W; ++i) dx[i] = 0.0f;
    }
    for (fb_i64 oh = 0; oh < p.OH; ++oh)
      for (fb_i64 ow = 0; ow < p.OW; ++ow) {
        fb_i64 h0, h1, w0, w1;
        if (mode == 2) {
          h0 = oh * p.H / p.OH; h1 = ((oh + 1) * p.H + p.OH - 1) / p.OH;
          w0 = ow * p.W / p.OW; w1 = ((ow + 1) * p.W + p.OW - 1) / p.OW;
        } else {
          h0 = oh * p.sh - p.ph; h1 = h0 + p.kh; w0 = ow * p.sw - p.pw; w1 = w0 + p.kw;
        }
        float count = mode == 2 ? (float)((h1 - h0) * (w1 - w0)) : (float)(p.kh * p.kw);
        fb_i64 best = -1;
        float acc = mode == 0 ? -__builtin_inff() : 0.0f;
        fb_i64 oi = (pl * p.OH + oh) * p.OW + ow;
        for (fb_i64 i = h0; i < h1; ++i) {
          if (i < 0 || i >= p.H) continue;
          for (fb_i64 j = w0; j < w1; ++j) {
            if (j < 0 || j >= p.W) continue;
            if (mode == 0) {
              float v = x[i * p.W + j];
              if (best < 0 || v > acc || v != v) { acc = v; best = i * p.W + j; }
            } else if (grad) {
              p.y[pl * p.H * p.W + i * p.W + j] += p.g[oi] / count;
            } else {
              acc += x[i * p.W + j];
            }
          }
        }
        if (!grad) p.y[oi] = mode == 0 ? acc : acc / count;
        else if (mode == 0 && best >= 0) p.y[pl * p.H * p.W + best] += p.g[oi];
      }
  }
}

// ---- extern: index_add (embedding gradient), serial: rows may repeat -------------------
extern "C" void fb_index_add(const float* x, const fb_i64* index, const float* src, float* out, fb_i64 outer, fb_i64 rows,
                             fb_i64 n, fb_i64 inner, fb_i64 site) {
  for (fb_i64 i = 0; i < outer * rows * inner; ++i) out[i] = x[i];
  for (fb_i64 j = 0; j < n; ++j)
    if ((fb_u64)index[j] >= (fb_u64)rows) {  // reported, and the whole scatter skipped
      fb_index_fault(index[j], rows, site);
      return;
    }
  for (fb_i64 o = 0; o < outer; ++o)
    for (fb_i64 j = 0; j < n; ++j)
      for (fb_i64 i = 0; i < inner; ++i) out[(o * rows + index[j]) * inner + i] += src[(o * n + j) * inner + i];
}
// ---- end of the runtime library -------------------------------------------------
)LIBRARY" + std::string(cpuBlockedConvLibrary());
  return text.c_str();
}

const std::vector<std::string>& cpuRuntimeLibrarySymbols() {
  static const std::vector<std::string> names = {"fb_matmul", "fb_conv_rows", "fb_conv_input_grad_rows", "fb_conv_weight_grad_rows",
                                                 "fb_conv_gemm", "fb_conv_blocked", "fb_pool_rows", "fb_index_add"};
  return names;
}

}  // namespace fusebox

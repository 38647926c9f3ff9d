// Device helpers and extern kernels compiled with every generated CUDA module: the same fb_*
// math names as the CPU prelude (so one expression emitter serves both printers), block
// reductions with warp shuffles, and direct convolution / pooling / scatter-add kernels.
#include "core/codegen/cuda/cuda_prelude.h"

#include <string>

#include "core/codegen/half_storage.h"
#include "core/codegen/libm_helpers.h"

namespace fusebox {

const char* cudaPrelude() {
  static const std::string text = R"PRELUDE(// ---- Fusebox CUDA prelude -----------------------------------------------
// The shared expression emitter writes infinities and NaNs as clang builtins.
#define __builtin_inff() __int_as_float(0x7f800000)
#define __builtin_inf() __longlong_as_double(0x7ff0000000000000ULL)
#define __builtin_nanf(s) __int_as_float(0x7fffffff)
#define __builtin_nan(s) __longlong_as_double(0x7ff8000000000000ULL)
typedef long long fb_i64;
typedef unsigned long long fb_u64;
// Index faults (as on the CPU): the first out-of-range data-dependent index of a run is kept
// (node id + 1, index, size) for the host to report after the launch; the faulting read uses 0.
__device__ fb_u64 fusebox_fault[3];
__device__ __noinline__ void fb_index_fault(fb_i64 i, fb_i64 n, fb_i64 site) {
  if (atomicCAS(&fusebox_fault[0], 0ull, (fb_u64)(site + 1)) == 0ull) fusebox_fault[1] = (fb_u64)i, fusebox_fault[2] = (fb_u64)n;
}
__device__ __forceinline__ fb_i64 fb_check_index(fb_i64 i, fb_i64 n, fb_i64 site) {
  if ((fb_u64)i < (fb_u64)n) return i;
  fb_index_fault(i, n, site);
  return 0;
}
__device__ __forceinline__ float fb_exp(float x) { return expf(x); }
__device__ __forceinline__ double fb_exp(double x) { return exp(x); }
__device__ __forceinline__ float fb_log(float x) { return logf(x); }
__device__ __forceinline__ double fb_log(double x) { return log(x); }
__device__ __forceinline__ float fb_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double fb_tanh(double x) { return tanh(x); }
__device__ __forceinline__ float fb_erf(float x) { return erff(x); }
__device__ __forceinline__ double fb_erf(double x) { return erf(x); }
__device__ __forceinline__ float fb_pow(float x, float y) { return powf(x, y); }
__device__ __forceinline__ double fb_pow(double x, double y) { return pow(x, y); }
__device__ __forceinline__ fb_i64 fb_pow(fb_i64 x, fb_i64 y) {  // exact, as the CPU prelude's
  if (y < 0) return x == 1 ? 1 : x == -1 ? ((y & 1) ? -1 : 1) : 0;
  fb_u64 r = 1, b = (fb_u64)x;
  for (; y; y >>= 1, b *= b)
    if (y & 1) r *= b;
  return (fb_i64)r;
}
__device__ __forceinline__ int fb_pow(int x, int y) { return (int)fb_pow((fb_i64)x, (fb_i64)y); }
__device__ __forceinline__ float fb_sin(float x) { return sinf(x); }
__device__ __forceinline__ double fb_sin(double x) { return sin(x); }
__device__ __forceinline__ float fb_cos(float x) { return cosf(x); }
__device__ __forceinline__ double fb_cos(double x) { return cos(x); }
__device__ __forceinline__ float fb_atan(float x) { return atanf(x); }
__device__ __forceinline__ double fb_atan(double x) { return atan(x); }
__device__ __forceinline__ float fb_floor(float x) { return floorf(x); }
__device__ __forceinline__ double fb_floor(double x) { return floor(x); }
__device__ __forceinline__ float fb_round(float x) { return rintf(x); }
__device__ __forceinline__ double fb_round(double x) { return rint(x); }
__device__ __forceinline__ float fb_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double fb_sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float fb_abs(float x) { return fabsf(x); }
__device__ __forceinline__ double fb_abs(double x) { return fabs(x); }
template <class T> __device__ __forceinline__ T fb_abs(T x) { return x < 0 ? -x : x; }
template <class T> __device__ __forceinline__ T fb_max(T a, T b) { return (a != a || a > b) ? a : b; }
template <class T> __device__ __forceinline__ T fb_min(T a, T b) { return (a != a || a < b) ? a : b; }
template <class T> __device__ __forceinline__ T fb_mul(T a, T b) { return a * b; }
// Floor division and modulo by a positive constant, for index operands that may be negative.
template <class T, class U> __device__ __forceinline__ T fb_floordiv(T a, U d) { return a / (T)d - (T)((a % (T)d != 0) & (a < 0)); }
template <class T, class U> __device__ __forceinline__ T fb_floormod(T a, U d) { T r = a % (T)d; return r < 0 ? r + (T)d : r; }
)PRELUDE" + cudaLibmHelpers() +
                                  "#define FB_F32_BITS(f) __float_as_uint(f)\n#define FB_BITS_F32(u) __uint_as_float(u)\n" +
                                  halfStorageHelpers("__device__ __forceinline__", "__device__ __forceinline__") + R"PRELUDE(__device__ __forceinline__ fb_u64 fb_splitmix(fb_u64 x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
__device__ __forceinline__ double fb_rand(fb_u64 seed, fb_u64 index) {
  return (double)(fb_splitmix(fb_splitmix(seed) ^ index) >> 11) * 0x1.0p-53;
}

struct FbSum { template <class T> __device__ T operator()(T a, T b) const { return a + b; } };
struct FbMax { template <class T> __device__ T operator()(T a, T b) const { return fb_max(a, b); } };
struct FbMin { template <class T> __device__ T operator()(T a, T b) const { return fb_min(a, b); } };
struct FbProd { template <class T> __device__ T operator()(T a, T b) const { return a * b; } };

// Reduces v over the block (warp shuffles, then one warp over the warps' partials); every
// thread returns the result. `scratch` holds 32 values of T.
// `identity` converts to T (a literal's type may differ: long vs long long for i64).
template <class T> struct FbSame { typedef T type; };
template <class T, class Op>
__device__ T fb_block_reduce(T v, Op op, typename FbSame<T>::type identity, T* scratch) {
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : identity;
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// ---- extern kernels (one thread per output element) ----------------------------
struct FbConv {
  const float* x; const float* w; float* y;
  fb_i64 N, C, H, W, O, KH, KW, OH, OW, groups, sh, sw, ph, pw, dh, dw;
  // The forward's epilogue (core/schedule/conv_epilogue.h): y = act((conv + bias[o]) + res), act
  // min(max(v, lo), hi) or, with silu, v * (1 / (exp(-v) + 1)) as its separate kernel computes it.
  const float* bias; const float* res; int lower, upper; float lo, hi; int silu;
};
// That epilogue on v, the convolution's value at output element `at` of channel o.
__device__ __forceinline__ float fb_conv_epilogue(const FbConv& c, float v, fb_i64 o, fb_i64 at) {
  if (c.bias) v = v + c.bias[o];
  if (c.res) v = v + c.res[at];
  if (c.silu) v = v * (1.0f / (fb_exp(-v) + 1.0f));
  if (c.lower) v = fb_max(v, c.lo);
  if (c.upper) v = fb_min(v, c.hi);
  return v;
}
extern "C" __global__ void fb_conv2d(FbConv c) {
  fb_i64 total = c.N * c.O * c.OH * c.OW, cpg = c.C / c.groups, opg = c.O / c.groups;
  for (fb_i64 i = (fb_i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (fb_i64)gridDim.x * blockDim.x) {
    fb_i64 ow = i % c.OW, oh = (i / c.OW) % c.OH, o = (i / (c.OW * c.OH)) % c.O, n = i / (c.OW * c.OH * c.O), g = o / opg;
    float acc = 0.0f;
    for (fb_i64 ci = 0; ci < cpg; ++ci)
      for (fb_i64 kh = 0; kh < c.KH; ++kh) {
        fb_i64 ih = oh * c.sh - c.ph + kh * c.dh;
        if (ih < 0 || ih >= c.H) continue;
        for (fb_i64 kw = 0; kw < c.KW; ++kw) {
          fb_i64 iw = ow * c.sw - c.pw + kw * c.dw;
          if (iw < 0 || iw >= c.W) continue;
          acc = fmaf(c.x[((n * c.C + g * cpg + ci) * c.H + ih) * c.W + iw], c.w[((o * cpg + ci) * c.KH + kh) * c.KW + kw], acc);
        }
      }
    c.y[i] = fb_conv_epilogue(c, acc, o, i);
  }
}
// The forward as an implicit GEMM, where cuDNN is absent: per group, Y[pos, o] = sum over
// k = (ci, kh, kw) of X~[pos, k] W[o, k], X~ the image patches gathered on the fly (zero outside).
// A 256-thread block computes 64 positions x 64 output channels, 4 x 4 per thread, from 8-deep
// slices of both staged in shared memory; grid (position tiles, channel tiles, groups).
extern "C" __global__ void __launch_bounds__(256) fb_conv2d_igemm(FbConv c) {
  __shared__ float As[8][64], Bs[8][64];
  const fb_i64 cpg = c.C / c.groups, opg = c.O / c.groups, K = cpg * c.KH * c.KW, P = c.N * c.OH * c.OW;
  const fb_i64 g = blockIdx.z, p0 = (fb_i64)blockIdx.x * 64, o0 = (fb_i64)blockIdx.y * 64;
  const int t = threadIdx.x, tp = (t % 16) * 4, to = (t / 16) * 4;
  float acc[4][4] = {};
  for (fb_i64 k0 = 0; k0 < K; k0 += 8) {
    for (int e = t; e < 512; e += 256) {  // 8 x 64 patch values and 8 x 64 weights
      int kk = e / 64, col = e % 64;
      fb_i64 k = k0 + kk, p = p0 + col, o = o0 + col;
      float a = 0.0f, b = 0.0f;
      if (k < K && p < P) {
        fb_i64 kw = k % c.KW, kh = (k / c.KW) % c.KH, ci = k / (c.KW * c.KH);
        fb_i64 ow = p % c.OW, oh = (p / c.OW) % c.OH, n = p / (c.OW * c.OH);
        fb_i64 ih = oh * c.sh - c.ph + kh * c.dh, iw = ow * c.sw - c.pw + kw * c.dw;
        if (ih >= 0 && ih < c.H && iw >= 0 && iw < c.W) a = c.x[((n * c.C + g * cpg + ci) * c.H + ih) * c.W + iw];
      }
      if (k < K && o < opg) b = c.w[(g * opg + o) * K + k];
      As[kk][col] = a;
      Bs[kk][col] = b;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < 8; ++kk) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = As[kk][tp + i], b[i] = Bs[kk][to + i];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i) {
    fb_i64 p = p0 + tp + i;
    if (p >= P) continue;
    fb_i64 ow = p % c.OW, oh = (p / c.OW) % c.OH, n = p / (c.OW * c.OH);
    for (int j = 0; j < 4; ++j) {
      fb_i64 oc = o0 + to + j;
      if (oc >= opg) continue;
      fb_i64 o = g * opg + oc, at = ((n * c.O + o) * c.OH + oh) * c.OW + ow;
      c.y[at] = fb_conv_epilogue(c, acc[i][j], o, at);
    }
  }
}
// The forward's epilogue on its own, in place on y, after a cuDNN convolution (the same order of
// operations as fb_conv2d's).
extern "C" __global__ void fb_conv2d_epilogue(FbConv c) {
  fb_i64 total = c.N * c.O * c.OH * c.OW;
  for (fb_i64 i = (fb_i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (fb_i64)gridDim.x * blockDim.x) {
    c.y[i] = fb_conv_epilogue(c, c.y[i], (i / (c.OW * c.OH)) % c.O, i);
  }
}
// dx[n, cin, ih, iw] = sum over (o, kh, kw) whose tap lands on (ih, iw); x holds the output gradient.
extern "C" __global__ void fb_conv2d_input_grad(FbConv c) {
  fb_i64 total = c.N * c.C * c.H * c.W, cpg = c.C / c.groups, opg = c.O / c.groups;
  for (fb_i64 i = (fb_i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (fb_i64)gridDim.x * blockDim.x) {
    fb_i64 iw = i % c.W, ih = (i / c.W) % c.H, cin = (i / (c.W * c.H)) % c.C, n = i / (c.W * c.H * c.C);
    fb_i64 g = cin / cpg, ci = cin % cpg;
    float acc = 0.0f;
    for (fb_i64 oo = 0; oo < opg; ++oo)
      for (fb_i64 kh = 0; kh < c.KH; ++kh) {
        fb_i64 t = ih + c.ph - kh * c.dh;
        if (t < 0 || t % c.sh) continue;
        fb_i64 oh = t / c.sh;
        if (oh >= c.OH) continue;
        for (fb_i64 kw = 0; kw < c.KW; ++kw) {
          fb_i64 u = iw + c.pw - kw * c.dw;
          if (u < 0 || u % c.sw) continue;
          fb_i64 ow = u / c.sw;
          if (ow >= c.OW) continue;
          fb_i64 o = g * opg + oo;
          acc = fmaf(c.x[((n * c.O + o) * c.OH + oh) * c.OW + ow], c.w[((o * cpg + ci) * c.KH + kh) * c.KW + kw], acc);
        }
      }
    c.y[i] = acc;
  }
}
// dw[o, ci, kh, kw]; x is the input, w holds the output gradient.
extern "C" __global__ void fb_conv2d_weight_grad(FbConv c) {
  fb_i64 cpg = c.C / c.groups, opg = c.O / c.groups, total = c.O * cpg * c.KH * c.KW;
  for (fb_i64 i = (fb_i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (fb_i64)gridDim.x * blockDim.x) {
    fb_i64 kw = i % c.KW, kh = (i / c.KW) % c.KH, ci = (i / (c.KW * c.KH)) % cpg, o = i / (c.KW * c.KH * cpg), g = o / opg;
    float acc = 0.0f;
    for (fb_i64 n = 0; n < c.N; ++n)
      for (fb_i64 oh = 0; oh < c.OH; ++oh) {
        fb_i64 ih = oh * c.sh - c.ph + kh * c.dh;
        if (ih < 0 || ih >= c.H) continue;
        for (fb_i64 ow = 0; ow < c.OW; ++ow) {
          fb_i64 iw = ow * c.sw - c.pw + kw * c.dw;
          if (iw < 0 || iw >= c.W) continue;
          acc = fmaf(c.x[((n * c.C + g * cpg + ci) * c.H + ih) * c.W + iw], c.w[((n * c.O + o) * c.OH + oh) * c.OW + ow], acc);
        }
      }
    c.y[i] = acc;
  }
}
struct FbPool {
  const float* x; const float* g; float* y;
  fb_i64 planes, H, W, OH, OW, kh, kw, sh, sw, ph, pw;
  int mode;  // 0 max, 1 avg (count_include_pad), 2 adaptive avg; gradients: 10, 11, 12
};
__device__ void fb_pool_window(const FbPool& p, fb_i64 oh, fb_i64 ow, fb_i64& h0, fb_i64& h1, fb_i64& w0, fb_i64& w1, float& count) {
  if (p.mode % 10 == 2) {
    h0 = oh * p.H / p.OH; h1 = ((oh + 1) * p.H + p.OH - 1) / p.OH;
    w0 = ow * p.W / p.OW; w1 = ((ow + 1) * p.W + p.OW - 1) / p.OW;
    count = (float)((h1 - h0) * (w1 - w0));
  } else {
    h0 = oh * p.sh - p.ph; h1 = h0 + p.kh; w0 = ow * p.sw - p.pw; w1 = w0 + p.kw;
    count = (float)(p.kh * p.kw);
  }
}
extern "C" __global__ void fb_pool(FbPool p) {  // forward: one thread per output
  fb_i64 total = p.planes * p.OH * p.OW;
  for (fb_i64 i = (fb_i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (fb_i64)gridDim.x * blockDim.x) {
    fb_i64 ow = i % p.OW, oh = (i / p.OW) % p.OH, pl = i / (p.OW * p.OH);
    fb_i64 h0, h1, w0, w1;
    float count, acc = p.mode == 0 ? -__int_as_float(0x7f800000) : 0.0f;
    fb_pool_window(p, oh, ow, h0, h1, w0, w1, count);
    bool first = true;
    for (fb_i64 a = h0; a < h1; ++a)
      for (fb_i64 b = w0; b < w1; ++b) {
        if (a < 0 || a >= p.H || b < 0 || b >= p.W) continue;
        float v = p.x[(pl * p.H + a) * p.W + b];
        if (p.mode == 0) { if (first || v > acc || v != v) acc = v; first = false; }
        else acc += v;
      }
    p.y[i] = p.mode == 0 ? acc : acc / count;
  }
}
extern "C" __global__ void fb_pool_grad(FbPool p) {  // gradient: one thread per input element
  fb_i64 total = p.planes * p.H * p.W;
  for (fb_i64 i = (fb_i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (fb_i64)gridDim.x * blockDim.x) {
    fb_i64 b = i % p.W, a = (i / p.W) % p.H, pl = i / (p.W * p.H);
    float acc = 0.0f;
    for (fb_i64 oh = 0; oh < p.OH; ++oh)
      for (fb_i64 ow = 0; ow < p.OW; ++ow) {
        fb_i64 h0, h1, w0, w1;
        float count;
        fb_pool_window(p, oh, ow, h0, h1, w0, w1, count);
        if (a < h0 || a >= h1 || b < w0 || b >= w1) continue;
        float gv = p.g[(pl * p.OH + oh) * p.OW + ow];
        if (p.mode == 10) {  // the window's first maximum takes the gradient
          fb_i64 best = -1;
          float bv = 0.0f;
          for (fb_i64 r = h0; r < h1; ++r)
            for (fb_i64 s = w0; s < w1; ++s) {
              if (r < 0 || r >= p.H || s < 0 || s >= p.W) continue;
              float v = p.x[(pl * p.H + r) * p.W + s];
              if (best < 0 || v > bv || v != v) { bv = v; best = r * p.W + s; }
            }
          if (best == a * p.W + b) acc += gv;
        } else {
          acc += gv / count;
        }
      }
    p.y[i] = acc;
  }
}
extern "C" __global__ void fb_index_add(const float* x, const fb_i64* index, const float* src, float* out, fb_i64 outer,
                                        fb_i64 rows, fb_i64 n, fb_i64 inner) {
  fb_i64 total = outer * rows * inner;
  for (fb_i64 i = (fb_i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (fb_i64)gridDim.x * blockDim.x) out[i] = x[i];
}
extern "C" __global__ void fb_index_add_scatter(const fb_i64* index, const float* src, float* out, fb_i64 outer, fb_i64 rows,
                                                fb_i64 n, fb_i64 inner, fb_i64 site) {
  fb_i64 total = outer * n * inner;
  for (fb_i64 i = (fb_i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (fb_i64)gridDim.x * blockDim.x) {
    fb_i64 in = i % inner, j = (i / inner) % n, o = i / (inner * n);
    if ((fb_u64)index[j] >= (fb_u64)rows) {  // reported; this element is not added anywhere
      fb_index_fault(index[j], rows, site);
      continue;
    }
    atomicAdd(&out[(o * rows + index[j]) * inner + in], src[i]);
  }
}
// ---- end of prelude -------------------------------------------------------------
)PRELUDE";
  return text.c_str();
}

}  // namespace fusebox

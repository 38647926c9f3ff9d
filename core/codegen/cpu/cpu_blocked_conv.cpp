// The runtime library's convolutions on channel-blocked images (channel_blocking.h): 1x1
// convolutions as tiles of positions x output-channel vectors, depthwise convolutions a block
// of channels at a time. Appended to cpuRuntimeLibrary(); generic vector code, so every host
// runs it (B, the block, is the host's kFbConvLanes: 16 floats with AVX-512, else 8).
#include "core/codegen/cpu/cpu_blocked_conv.h"

namespace fusebox {

const char* cpuBlockedConvLibrary() {
  return R"LIBRARY(
// ---- extern: convolutions on channel-blocked images ----------------------------------------
// Image n's channel c at position p is at ((n * Cp / B + c / B) * HW + p) * B + c % B, B =
// kFbConvLanes, Cp = C rounded up to a multiple of B: the padding lanes hold anything, their
// weights 0, and nothing reads them as a value. In both layouts channel c0's block starts
// at image + c0 * HW for c0 a multiple of B; within it the next channel is HW floats on (planes)
// or 1 (blocked), the next position 1 or B.
static const fb_i64 kFbBlk = kFbConvLanes;
// B vectors of B lanes turned: lane j of v[i] becomes lane i of v[j] (blocked <-> planes).
static inline void fb_blk_transpose(fb_cv (&v)[kFbConvLanes]) {
#if defined(__AVX512F__)
  fb_transpose16(v);
#else
  for (int i = 0; i < kFbConvLanes; ++i)
    for (int j = 0; j < i; ++j) {
      float t = v[i][j];
      v[i][j] = v[j][i];
      v[j][i] = t;
    }
#endif
}
// 1x1 convolutions (stride 1, no padding, ungrouped): a tile of kFbPwRows positions x 2 output
// blocks, its kFbPwRows x 2 accumulators and 2 weight vectors in registers (26 of AVX-512's 32,
// 14 of AVX2's 16), each input value broadcast from memory into 2 multiply-adds. The weights
// packed once per weight version: group g's channels [2gB, 2gB + 2B) as [C][2B].
static const int kFbPwRows = kFbConvLanes == 16 ? 12 : 6;
static const int kFbPwGroup = 2;
static const fb_i64 kFbParallelRows = 8;  // rows a launch wants at least, for 2-4 threads to share
struct FbPointwise {
  const FbConv* c;
  float* wp;
  fb_i64 HW, Ob, groups;       // positions, output blocks, their groups of kFbPwGroup
  fb_i64 chunks, chunk, parts;  // runs of `chunk` positions; parts of the groups a row does
};
// The sums of one tile, left in `out` ([RP][OB] vectors). A function of its own: with the
// epilogue's constants live beside them (SiLU's polynomial, the clamps), the accumulators spilled.
template <int RP, int OB, int PS>
__attribute__((noinline)) static void fb_pw_sums(const float* __restrict x, fb_i64 HW, fb_i64 C, const float* __restrict w,
                                                 fb_cv* __restrict out) {
  const fb_i64 CI = PS == 1 ? HW : 1;
  fb_cv acc[RP][OB];
  for (int p = 0; p < RP; ++p)
    for (int b = 0; b < OB; ++b) acc[p][b] = 0.0f;
  for (fb_i64 c0 = 0; c0 < C; c0 += kFbBlk) {
    const float* xb = x + c0 * HW;
    const fb_i64 n = C - c0 < kFbBlk ? C - c0 : kFbBlk;  // planes: C need not be a multiple of B
    for (fb_i64 ci = 0; ci < n; ++ci) {
      const float* xc = xb + ci * CI;
      const float* wc = w + (c0 + ci) * OB * kFbBlk;
      fb_cv wv[OB];
      for (int b = 0; b < OB; ++b) wv[b] = *(const fb_cvu*)(wc + b * kFbBlk);
      for (int p = 0; p < RP; ++p) {
        fb_cv xv = xc[p * PS];
        for (int b = 0; b < OB; ++b) acc[p][b] += xv * wv[b];
      }
    }
  }
  for (int p = 0; p < RP; ++p)
    for (int b = 0; b < OB; ++b) out[p * OB + b] = acc[p][b];
}
// The epilogue: blocked, a vector of B channels at a time (the residual is blocked too, the
// plan's rule); planes, a row of RP positions per channel through fb_conv_epilogue.
template <int RP, int OB>
static void fb_pw_store(const FbConv& c, const FbPointwise& q, fb_i64 n, fb_i64 ob0, fb_i64 p0, const fb_cv* acc) {
  if (c.yBlocked) {
    for (int b = 0; b < OB; ++b) {
      const fb_i64 at = ((n * q.Ob + ob0 + b) * q.HW + p0) * kFbBlk;
      const fb_i64 lanes = c.O - (ob0 + b) * kFbBlk < kFbBlk ? c.O - (ob0 + b) * kFbBlk : kFbBlk;
      const fb_cv bias = c.bias ? fb_load_lanes(c.bias + (ob0 + b) * kFbBlk, lanes) : (fb_cv)0.0f;
      for (int p = 0; p < RP; ++p) {
        fb_cv v = acc[p * OB + b];
        if (c.bias) v = v + bias;
        if (c.res) v = v + *(const fb_cvu*)(c.res + at + p * kFbBlk);
        *(fb_cvu*)(c.y + at + p * kFbBlk) = fb_conv_act(c, v);
      }
    }
    return;
  }
  // Planes: each block's RP x B sums turned into B channel rows of RP positions.
  for (int b = 0; b < OB; ++b) {
    fb_cv v[kFbConvLanes];
    for (int p = 0; p < kFbConvLanes; ++p) v[p] = p < RP ? acc[p * OB + b] : (fb_cv)0.0f;
    fb_blk_transpose(v);
    for (fb_i64 l = 0; l < kFbBlk; ++l) {
      const fb_i64 o = (ob0 + b) * kFbBlk + l;
      if (o >= c.O) return;
      float row[kFbConvLanes] __attribute__((aligned(64)));
      *(fb_cv*)row = v[l];
      fb_conv_epilogue(c, o, (n * c.O + o) * q.HW + p0, row, RP);
    }
  }
}
template <int RP, int PS>
static void fb_pw_tile(const FbConv& c, const FbPointwise& q, fb_i64 n, fb_i64 ob0, fb_i64 nb, const float* x, fb_i64 p0) {
  const float* w = q.wp + ob0 * kFbBlk * c.C;
  fb_cv acc[RP * kFbPwGroup];
  if (nb == 2) {
    fb_pw_sums<RP, 2, PS>(x + p0 * PS, q.HW, c.C, w, acc);
    fb_pw_store<RP, 2>(c, q, n, ob0, p0, acc);
  } else {
    fb_pw_sums<RP, 1, PS>(x + p0 * PS, q.HW, c.C, w, acc);
    fb_pw_store<RP, 1>(c, q, n, ob0, p0, acc);
  }
}
template <int PS>
static void fb_pw_range(const FbConv& c, const FbPointwise& q, fb_i64 n, fb_i64 ob0, fb_i64 nb, fb_i64 p, fb_i64 end) {
  const float* x = c.x + n * (PS == 1 ? c.C : (c.C + kFbBlk - 1) / kFbBlk * kFbBlk) * q.HW;  // blocked: C padded
  for (; p + kFbPwRows <= end; p += kFbPwRows) fb_pw_tile<kFbPwRows, PS>(c, q, n, ob0, nb, x, p);
  for (; p + 4 <= end; p += 4) fb_pw_tile<4, PS>(c, q, n, ob0, nb, x, p);
  for (; p < end; ++p) fb_pw_tile<1, PS>(c, q, n, ob0, nb, x, p);
}
// Rows (n, chunk of positions, part of the output groups): a thread's rows are a run of
// positions, as the depthwise convolutions' (fb_dwb_rows), so each core keeps reading what it
// wrote, layer after layer; images of few positions split their output channels too.
static void fb_pw_rows(fb_i64 begin, fb_i64 end, void* data) {
  const FbPointwise& q = *(const FbPointwise*)data;
  const FbConv& c = *q.c;
  for (fb_i64 r = begin; r < end; ++r) {
    const fb_i64 n = r / (q.chunks * q.parts), p = r / q.parts % q.chunks * q.chunk, part = r % q.parts;
    const fb_i64 stop = p + q.chunk < q.HW ? p + q.chunk : q.HW;
    for (fb_i64 g = part * q.groups / q.parts; g < (part + 1) * q.groups / q.parts; ++g) {
      const fb_i64 ob0 = g * kFbPwGroup, nb = q.Ob - ob0 < kFbPwGroup ? q.Ob - ob0 : kFbPwGroup;
      if (c.xBlocked) fb_pw_range<kFbBlk>(c, q, n, ob0, nb, p, stop);
      else fb_pw_range<1>(c, q, n, ob0, nb, p, stop);
    }
  }
}
static void fb_pw_pack_rows(fb_i64 begin, fb_i64 end, void* data) {
  const FbPointwise& q = *(const FbPointwise*)data;
  const FbConv& c = *q.c;
  for (fb_i64 g = begin; g < end; ++g) {
    const fb_i64 ob0 = g * kFbPwGroup, nb = q.Ob - ob0 < kFbPwGroup ? q.Ob - ob0 : kFbPwGroup;
    float* dst = q.wp + ob0 * kFbBlk * c.C;
    for (fb_i64 ci = 0; ci < c.C; ++ci)
      for (fb_i64 j = 0; j < nb * kFbBlk; ++j) {
        const fb_i64 o = ob0 * kFbBlk + j;
        dst[ci * nb * kFbBlk + j] = o < c.O ? c.w[o * c.C + ci] : 0.0f;  // a partial last block: 0 weights
      }
  }
}
static void fb_conv_pointwise_blocked(const FuseboxRuntime* rt, int kernel, const FbConv& c, float* scratch) {
  FbPointwise q;
  q.c = &c;
  q.wp = scratch;
  q.HW = c.OH * c.OW;
  q.Ob = (c.O + kFbBlk - 1) / kFbBlk;
  q.groups = (q.Ob + kFbPwGroup - 1) / kFbPwGroup;
  q.chunks = (q.HW + 8 * kFbPwRows - 1) / (8 * kFbPwRows);
  q.chunk = ((q.HW + q.chunks - 1) / q.chunks + kFbPwRows - 1) / kFbPwRows * kFbPwRows;  // whole tiles but the last chunk's
  q.chunks = (q.HW + q.chunk - 1) / q.chunk;
  q.parts = q.chunks >= kFbParallelRows ? 1 : (kFbParallelRows + q.chunks - 1) / q.chunks;
  if (q.parts > q.groups) q.parts = q.groups;
  // The packed weights stay in the scratch from call to call, as fb_conv_winograd's.
  FbWinoKey key{(fb_i64)c.w, rt->version(rt->ctx, c.w), 0}, last;
  float* keyAt = q.wp + q.Ob * kFbBlk * c.C;
  __builtin_memcpy(&last, keyAt, sizeof last);
  if (key.version < 0 || last.weights != key.weights || last.version != key.version || last.turned != 2) {
    rt->launch(rt->ctx, kernel, fb_pw_pack_rows, q.groups, &q);
    key.turned = 2;  // marks the pointwise packing (a Winograd transform never writes 2)
    if (key.version < 0) key.weights = 0;
    __builtin_memcpy(keyAt, &key, sizeof key);
  }
  rt->launch(rt->ctx, kernel, fb_pw_rows, c.N * q.chunks * q.parts, &q);
}
// Depthwise convolutions a block of B channels at a time: the padded input rows an output rows'
// chunk reads copied into a band (B floats per position, zero columns either side; from planes,
// turned B columns at a time), then each output position one vector per tap, kept in 8
// independent accumulators along the row, stored as it is or turned into B plane rows.
static const fb_i64 kFbDwbBand = 32768, kFbDwbTaps = 64, kFbDwbRow = 8192;
struct FbDwBlocked {
  const FbConv* c;
  fb_i64 Cb, cols, span, outRows, chunks;
};
template <int KW, int S>
static void fb_dwb_row(const FbConv& c, const float* __restrict band, fb_i64 cols, const fb_cv* __restrict wt, fb_cv bias,
                       float* __restrict out) {
  const fb_i64 kw_n = KW ? KW : c.KW, s = S ? S : c.sw, d = KW ? 1 : c.dw;
  fb_i64 ow = 0;
  for (; ow + 8 <= c.OW; ow += 8) {
    fb_cv acc[8];
    for (int b = 0; b < 8; ++b) acc[b] = 0.0f;
    for (fb_i64 kh = 0; kh < c.KH; ++kh) {
      const float* r = band + (kh * c.dh * cols + ow * s) * kFbBlk;
      for (fb_i64 kw = 0; kw < kw_n; ++kw) {
        const fb_cv wv = wt[kh * kw_n + kw];
        for (int b = 0; b < 8; ++b) acc[b] += *(const fb_cv*)(r + (b * s + kw * d) * kFbBlk) * wv;
      }
    }
    for (int b = 0; b < 8; ++b) *(fb_cvu*)(out + (ow + b) * kFbBlk) = fb_conv_act(c, c.bias ? acc[b] + bias : acc[b]);
  }
  for (; ow < c.OW; ++ow) {
    fb_cv acc = 0.0f;
    for (fb_i64 kh = 0; kh < c.KH; ++kh) {
      const float* r = band + (kh * c.dh * cols + ow * s) * kFbBlk;
      for (fb_i64 kw = 0; kw < kw_n; ++kw) acc += *(const fb_cv*)(r + kw * d * kFbBlk) * wt[kh * kw_n + kw];
    }
    *(fb_cvu*)(out + ow * kFbBlk) = fb_conv_act(c, c.bias ? acc + bias : acc);
  }
}
// Rows (n, chunk of output rows, block): a thread's rows are a run of output rows (see fb_pw_rows).
static void fb_dwb_rows(fb_i64 begin, fb_i64 end, void* data) {
  const FbDwBlocked& q = *(const FbDwBlocked*)data;
  const FbConv& c = *q.c;
  float band[kFbDwbBand] __attribute__((aligned(64)));
  float row[kFbDwbRow] __attribute__((aligned(64)));  // an output row before it is turned into planes
  for (fb_i64 i = 0; i < (c.OW + kFbBlk) * kFbBlk; ++i) row[i] = 0.0f;
  const fb_i64 used = ((q.outRows < c.OH ? q.outRows : c.OH) - 1) * c.sh + q.span;
  for (fb_i64 i = 0; i < used * q.cols * kFbBlk; ++i) band[i] = 0.0f;  // the padding columns stay 0
  const fb_i64 taps = c.KH * c.KW;
  fb_cv wt[kFbDwbTaps];
  for (fb_i64 r = begin; r < end; ++r) {
    const fb_i64 n = r / (q.chunks * q.Cb), cb = r % q.Cb, oh0 = r / q.Cb % q.chunks * q.outRows;
    const fb_i64 oh1 = oh0 + q.outRows < c.OH ? oh0 + q.outRows : c.OH;
    const fb_i64 nb = n * q.Cb + cb;
    const fb_i64 lanes = c.C - cb * kFbBlk < kFbBlk ? c.C - cb * kFbBlk : kFbBlk;  // the padding's lanes: weight 0
    for (fb_i64 t = 0; t < taps; ++t)
      for (fb_i64 l = 0; l < kFbBlk; ++l) wt[t][l] = l < lanes ? c.w[(cb * kFbBlk + l) * taps + t] : 0.0f;
    fb_cv bias = 0.0f;
    if (c.bias) bias = fb_load_lanes(c.bias + cb * kFbBlk, lanes);
    // The block's image: one plane of B channels, or B planes (the last block's planes past C
    // repeat its last, their outputs never stored).
    const float* x = c.x + nb * c.H * c.W * kFbBlk;
    const float* planes[kFbConvLanes];
    for (fb_i64 l = 0; l < kFbBlk; ++l) planes[l] = c.x + (n * c.C + cb * kFbBlk + (l < lanes ? l : lanes - 1)) * c.H * c.W;
    for (fb_i64 i = 0; i < (oh1 - 1 - oh0) * c.sh + q.span; ++i) {
      const fb_i64 ih = oh0 * c.sh - c.ph + i;
      float* dst = band + (i * q.cols + c.pw) * kFbBlk;
      if (ih < 0 || ih >= c.H) {
        for (fb_i64 j = 0; j < c.W * kFbBlk; ++j) dst[j] = 0.0f;
      } else if (c.xBlocked) {
        __builtin_memcpy(dst, x + ih * c.W * kFbBlk, (fb_u64)(c.W * kFbBlk) * sizeof(float));
      } else {
        for (fb_i64 p0 = 0; p0 < c.W; p0 += kFbBlk) {
          const fb_i64 m = c.W - p0 < kFbBlk ? c.W - p0 : kFbBlk;
          fb_cv v[kFbConvLanes];
          for (fb_i64 l = 0; l < kFbBlk; ++l) v[l] = fb_load_lanes(planes[l] + ih * c.W + p0, m);
          fb_blk_transpose(v);
          for (fb_i64 j = 0; j < m; ++j) *(fb_cv*)(dst + (p0 + j) * kFbBlk) = v[j];
        }
      }
    }
    float* y = c.y + nb * c.OH * c.OW * kFbBlk;
    for (fb_i64 oh = oh0; oh < oh1; ++oh) {
      const float* b = band + (oh - oh0) * c.sh * q.cols * kFbBlk;
      float* out = c.yBlocked ? y + oh * c.OW * kFbBlk : row;
      if (c.dw == 1 && c.sw == 1 && c.KW == 3) fb_dwb_row<3, 1>(c, b, q.cols, wt, bias, out);
      else if (c.dw == 1 && c.sw == 2 && c.KW == 3) fb_dwb_row<3, 2>(c, b, q.cols, wt, bias, out);
      else if (c.dw == 1 && c.sw == 1 && c.KW == 5) fb_dwb_row<5, 1>(c, b, q.cols, wt, bias, out);
      else if (c.dw == 1 && c.sw == 2 && c.KW == 5) fb_dwb_row<5, 2>(c, b, q.cols, wt, bias, out);
      else if (c.dw == 1 && c.sw == 1 && c.KW == 7) fb_dwb_row<7, 1>(c, b, q.cols, wt, bias, out);
      else fb_dwb_row<0, 0>(c, b, q.cols, wt, bias, out);
      if (c.yBlocked) continue;
      for (fb_i64 p0 = 0; p0 < c.OW; p0 += kFbBlk) {  // planes: the row turned back, B positions at a time
        const fb_i64 m = c.OW - p0 < kFbBlk ? c.OW - p0 : kFbBlk;
        fb_cv v[kFbConvLanes];
        for (fb_i64 j = 0; j < kFbBlk; ++j) v[j] = *(const fb_cv*)(row + (p0 + j) * kFbBlk);  // past OW: not stored
        fb_blk_transpose(v);
        for (fb_i64 l = 0; l < lanes; ++l) fb_store_lanes(c.y + ((n * c.C + cb * kFbBlk + l) * c.OH + oh) * c.OW + p0, v[l], m);
      }
    }
  }
}
static void fb_conv_depthwise_blocked(const FuseboxRuntime* rt, int kernel, const FbConv& c) {
  FbDwBlocked q;
  q.c = &c;
  q.Cb = (c.C + kFbBlk - 1) / kFbBlk;
  q.cols = c.W + 2 * c.pw;
  q.span = (c.KH - 1) * c.dh + 1;
  q.outRows = (kFbDwbBand / (q.cols * kFbBlk) - q.span) / c.sh + 1;
  // Few blocks: chunks of output rows as well, of at least 4 rows (each copies its span - stride
  // rows of halo again), so that the threads have rows enough to share.
  const fb_i64 blocks = c.N * q.Cb, split = blocks >= 2 * kFbParallelRows ? 1 : (2 * kFbParallelRows + blocks - 1) / blocks;
  fb_i64 want = (c.OH + split - 1) / split;
  if (want < 4) want = 4;
  if (q.outRows > want) q.outRows = want;
  q.chunks = (c.OH + q.outRows - 1) / q.outRows;
  rt->launch(rt->ctx, kernel, fb_dwb_rows, c.N * q.Cb * q.chunks, &q);
}
extern "C" void fb_conv_blocked(const FuseboxRuntime* rt, int kernel, FbConv c, float* scratch) {
  if (c.groups == 1) fb_conv_pointwise_blocked(rt, kernel, c, scratch);
  else fb_conv_depthwise_blocked(rt, kernel, c);
}
// ---- end of the channel-blocked convolutions ---------------------------------------------
)LIBRARY";
}

}  // namespace fusebox

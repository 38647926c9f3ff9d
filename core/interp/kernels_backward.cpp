// Kernels of the torch-level backward ops (conv/pool/embedding/slice gradients).
#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/interp/kernels.h"
#include "core/ops/shape_rules.h"

namespace fusebox {

namespace {

std::pair<int64_t, int64_t> pairOf(const KernelCall& c, const std::string& name, const std::vector<int64_t>& fallback) {
  std::vector<int64_t> v = c.ints(name).empty() ? fallback : c.ints(name);
  return v.size() == 1 ? std::pair{v[0], v[0]} : std::pair{v[0], v[1]};
}

struct ConvGeometry {
  int64_t N, C, H, W, O, KH, KW, OH, OW, groups, cpg, opg, sh, sw, ph, pw, dh, dw;
};

ConvGeometry convGeometry(const KernelCall& c, const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                          const std::vector<int64_t>& y) {
  ConvGeometry g{};
  g.N = x[0], g.C = x[1], g.H = x[2], g.W = x[3];
  g.O = w[0], g.KH = w[2], g.KW = w[3], g.OH = y[2], g.OW = y[3];
  g.groups = c.i("groups"), g.cpg = g.C / g.groups, g.opg = g.O / g.groups;
  std::tie(g.sh, g.sw) = pairOf(c, "stride", {});
  std::tie(g.ph, g.pw) = pairOf(c, "padding", {});
  std::tie(g.dh, g.dw) = pairOf(c, "dilation", {});
  return g;
}

// Visits every (input element, weight element, output element) triple of a convolution.
template <class F>
void forEachConvTap(const ConvGeometry& g, F f) {
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t o = 0; o < g.O; ++o) {
      int64_t grp = o / g.opg;
      for (int64_t oh = 0; oh < g.OH; ++oh)
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          int64_t yi = ((n * g.O + o) * g.OH + oh) * g.OW + ow;
          for (int64_t ci = 0; ci < g.cpg; ++ci)
            for (int64_t kh = 0; kh < g.KH; ++kh) {
              int64_t ih = oh * g.sh - g.ph + kh * g.dh;
              if (ih < 0 || ih >= g.H) continue;
              for (int64_t kw = 0; kw < g.KW; ++kw) {
                int64_t iw = ow * g.sw - g.pw + kw * g.dw;
                if (iw < 0 || iw >= g.W) continue;
                f(((n * g.C + grp * g.cpg + ci) * g.H + ih) * g.W + iw, ((o * g.cpg + ci) * g.KH + kh) * g.KW + kw, yi);
              }
            }
        }
    }
}

// Visits every (input element, output element) pair of a pooling window; padding taps skipped.
template <class F>
void forEachPoolTap(const KernelCall& c, const std::vector<int64_t>& x, const std::vector<int64_t>& y, F f) {
  auto [kh, kw] = pairOf(c, "kernel_size", {});
  auto [sh, sw] = pairOf(c, "stride", c.ints("kernel_size"));
  auto [ph, pw] = pairOf(c, "padding", {0});
  int64_t planes = x[0] * x[1], H = x[2], W = x[3], OH = y[2], OW = y[3];
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t yi = (p * OH + oh) * OW + ow;
        f.beginWindow(yi);
        for (int64_t i = 0; i < kh; ++i)
          for (int64_t j = 0; j < kw; ++j) {
            int64_t ih = oh * sh - ph + i, iw = ow * sw - pw + j;
            if (ih >= 0 && ih < H && iw >= 0 && iw < W) f.tap((p * H + ih) * W + iw, yi);
          }
        f.endWindow(yi, kh * kw);
      }
}

}  // namespace

void addBackwardKernels(KernelTable& t) {
  t["conv2d_backward_input"] = [](const KernelCall& c) {
    const Tensor &g = c.x(0), &w = c.x(1);
    Tensor out = c.output();
    forEachConvTap(convGeometry(c, c.outSizes, w.sizes, g.sizes),
                   [&](int64_t xi, int64_t wi, int64_t yi) { out.data[xi] += g.data[yi] * w.data[wi]; });
    return out;
  };
  t["conv2d_backward_weight"] = [](const KernelCall& c) {
    const Tensor &x = c.x(0), &g = c.x(1);
    Tensor out = c.output();
    forEachConvTap(convGeometry(c, x.sizes, c.outSizes, g.sizes),
                   [&](int64_t xi, int64_t wi, int64_t yi) { out.data[wi] += g.data[yi] * x.data[xi]; });
    return out;
  };
  t["max_pool2d_backward"] = [](const KernelCall& c) {
    const Tensor &g = c.x(0), &x = c.x(1);
    Tensor out = c.output();
    struct {
      const Tensor &g, &x;
      Tensor& out;
      int64_t best = -1;
      void beginWindow(int64_t) { best = -1; }
      void tap(int64_t xi, int64_t) {
        if (best < 0 || x.data[xi] > x.data[best] || std::isnan(x.data[xi])) best = xi;
      }
      void endWindow(int64_t yi, int64_t) {
        if (best >= 0) out.data[best] += g.data[yi];
      }
    } visitor{g, x, out};
    forEachPoolTap(c, x.sizes, g.sizes, visitor);
    return out;
  };
  t["avg_pool2d_backward"] = [](const KernelCall& c) {
    const Tensor& g = c.x(0);
    Tensor out = c.output();
    struct {
      const Tensor& g;
      Tensor& out;
      std::vector<int64_t> taps;
      void beginWindow(int64_t) { taps.clear(); }
      void tap(int64_t xi, int64_t) { taps.push_back(xi); }
      void endWindow(int64_t yi, int64_t windowSize) {  // count_include_pad: divide by the full window
        for (int64_t xi : taps) out.data[xi] += g.data[yi] / static_cast<double>(windowSize);
      }
    } visitor{g, out, {}};
    forEachPoolTap(c, c.outSizes, g.sizes, visitor);
    return out;
  };
  t["adaptive_avg_pool2d_backward"] = [](const KernelCall& c) {
    const Tensor& g = c.x(0);
    Tensor out = c.output();
    int64_t planes = c.outSizes[0] * c.outSizes[1], H = c.outSizes[2], W = c.outSizes[3];
    int64_t OH = g.sizes[2], OW = g.sizes[3];
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          int64_t h0 = oh * H / OH, h1 = ((oh + 1) * H + OH - 1) / OH;
          int64_t w0 = ow * W / OW, w1 = ((ow + 1) * W + OW - 1) / OW;
          double share = g.data[(p * OH + oh) * OW + ow] / static_cast<double>((h1 - h0) * (w1 - w0));
          for (int64_t i = h0; i < h1; ++i)
            for (int64_t j = w0; j < w1; ++j) out.data[(p * H + i) * W + j] += share;
        }
    return out;
  };
  t["embedding_backward"] = [](const KernelCall& c) {
    const Tensor &g = c.x(0), &idx = c.x(1);
    Tensor out = c.output();
    int64_t rows = c.outSizes[0], dim = c.outSizes[1];
    for (int64_t i = 0; i < idx.numel(); ++i) {
      int64_t r = static_cast<int64_t>(idx.data[i]);
      if (r < 0 || r >= rows) c.fail("index " + std::to_string(r) + " is out of range for " + std::to_string(rows) + " rows");
      for (int64_t d = 0; d < dim; ++d) out.data[r * dim + d] += g.data[i * dim + d];
    }
    return out;
  };
  t["slice_backward"] = [](const KernelCall& c) {
    const Tensor& g = c.x();
    int64_t dim = normalizeAxis(c.i("dim"), c.outSizes.size(), c.node.op);
    int64_t n = c.outSizes[dim], start = c.i("start"), step = c.i("step");
    start = std::clamp(start < 0 ? start + n : start, int64_t{0}, n);
    AxisSplit s = splitAt(c.outSizes, dim);
    int64_t len = g.sizes[dim];
    Tensor out = c.output();
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t k = 0; k < len; ++k)
        for (int64_t i = 0; i < s.inner; ++i)
          out.data[(o * n + start + k * step) * s.inner + i] = g.data[(o * len + k) * s.inner + i];
    return out;
  };
  t["sym_size"] = [](const KernelCall& c) {
    if (!c.dim("size").isConstant()) c.fail("size " + c.dim("size").str() + " is symbolic; bind it before running");
    Tensor out = c.output();
    out.data[0] = static_cast<double>(c.dim("size").value());
    return out;
  };
}

}  // namespace fusebox

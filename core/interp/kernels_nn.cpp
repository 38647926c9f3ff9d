#include <algorithm>
#include <cmath>

#include "core/interp/kernels.h"

namespace fusebox {

namespace {

// C[n, m] = A[n, k] @ B[k, m], all contiguous; C is overwritten.
void gemm(const double* a, const double* b, double* c, int64_t n, int64_t k, int64_t m) {
  std::fill(c, c + n * m, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = 0; p < k; ++p) {
      double av = a[i * k + p];
      const double* brow = b + p * m;
      double* crow = c + i * m;
      for (int64_t j = 0; j < m; ++j) crow[j] += av * brow[j];
    }
}

Tensor matmulKernel(const KernelCall& c) {
  std::vector<int64_t> as = c.x(0).sizes, bs = c.x(1).sizes;
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  int64_t n = as[as.size() - 2], k = as.back(), m = bs.back();
  std::vector<int64_t> aBatch(as.begin(), as.end() - 2), bBatch(bs.begin(), bs.end() - 2);
  size_t rank = std::max(aBatch.size(), bBatch.size());
  std::vector<int64_t> batch(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i + aBatch.size() >= rank ? aBatch[i + aBatch.size() - rank] : 1;
    int64_t db = i + bBatch.size() >= rank ? bBatch[i + bBatch.size() - rank] : 1;
    batch[i] = std::max(da, db);
  }
  std::vector<int64_t> aOff = broadcastOffsets(aBatch, batch), bOff = broadcastOffsets(bBatch, batch);
  Tensor out = c.output();
  for (size_t bi = 0; bi < aOff.size(); ++bi)
    gemm(c.x(0).data.data() + aOff[bi] * n * k, c.x(1).data.data() + bOff[bi] * k * m,
         out.data.data() + bi * n * m, n, k, m);
  return out;
}

Tensor linearKernel(const KernelCall& c) {
  const Tensor &x = c.x(0), &w = c.x(1);
  int64_t in = w.sizes[1], outF = w.sizes[0], rows = x.numel() / in;
  Tensor out = c.output();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < outF; ++o) {
      double acc = c.in.size() == 3 ? c.x(2).data[o] : 0.0;
      for (int64_t i = 0; i < in; ++i) acc += x.data[r * in + i] * w.data[o * in + i];
      out.data[r * outF + o] = acc;
    }
  return out;
}

Tensor layerNormKernel(const KernelCall& c) {
  const Tensor& x = c.x(0);
  int64_t n = numelOf(c.ints("normalized_shape")), rows = x.numel() / std::max<int64_t>(n, 1);
  double eps = c.f("eps");
  Tensor out = c.output();
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = x.data.data() + r * n;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n; ++i) mean += row[i];
    mean /= n;
    for (int64_t i = 0; i < n; ++i) var += (row[i] - mean) * (row[i] - mean);
    var /= n;
    double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < n; ++i) {
      double y = (row[i] - mean) * inv;
      if (c.in.size() >= 2) y *= c.x(1).data[i];
      if (c.in.size() >= 3) y += c.x(2).data[i];
      out.data[r * n + i] = y;
    }
  }
  return out;
}

Tensor batchNormKernel(const KernelCall& c) {
  const Tensor& x = c.x(0);
  int64_t batch = x.sizes[0], ch = x.sizes[1], spatial = x.numel() / std::max<int64_t>(batch * ch, 1);
  double eps = c.f("eps");
  Tensor out = c.output();
  for (int64_t ci = 0; ci < ch; ++ci) {
    double mean = c.x(3).data[ci], var = c.x(4).data[ci];
    if (c.b("training")) {  // batch statistics, biased variance (what normalizes in torch)
      mean = var = 0;
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t s = 0; s < spatial; ++s) mean += x.data[(b * ch + ci) * spatial + s];
      mean /= batch * spatial;
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t s = 0; s < spatial; ++s) {
          double d = x.data[(b * ch + ci) * spatial + s] - mean;
          var += d * d;
        }
      var /= batch * spatial;
    }
    double scale = c.x(1).data[ci] / std::sqrt(var + eps), shift = c.x(2).data[ci];
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t s = 0; s < spatial; ++s) {
        int64_t i = (b * ch + ci) * spatial + s;
        out.data[i] = (x.data[i] - mean) * scale + shift;
      }
  }
  return out;
}

std::pair<int64_t, int64_t> pairAttr(const KernelCall& c, const std::string& name, const std::vector<int64_t>& fallback) {
  std::vector<int64_t> v = c.ints(name).empty() ? fallback : c.ints(name);
  return v.size() == 1 ? std::pair{v[0], v[0]} : std::pair{v[0], v[1]};
}

Tensor conv2dKernel(const KernelCall& c) {
  const Tensor &x = c.x(0), &w = c.x(1);
  int64_t N = x.sizes[0], C = x.sizes[1], H = x.sizes[2], W = x.sizes[3];
  int64_t O = w.sizes[0], KH = w.sizes[2], KW = w.sizes[3];
  int64_t groups = c.i("groups"), cpg = C / groups, opg = O / groups;
  auto [sh, sw] = pairAttr(c, "stride", {});
  auto [ph, pw] = pairAttr(c, "padding", {});
  auto [dh, dw] = pairAttr(c, "dilation", {});
  int64_t OH = c.outSizes[2], OW = c.outSizes[3];
  Tensor out = c.output();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o) {
      int64_t g = o / opg;
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = c.in.size() == 3 ? c.x(2).data[o] : 0.0;
          for (int64_t ci = 0; ci < cpg; ++ci)
            for (int64_t kh = 0; kh < KH; ++kh) {
              int64_t ih = oh * sh - ph + kh * dh;
              if (ih < 0 || ih >= H) continue;
              for (int64_t kw = 0; kw < KW; ++kw) {
                int64_t iw = ow * sw - pw + kw * dw;
                if (iw < 0 || iw >= W) continue;
                acc += x.data[((n * C + g * cpg + ci) * H + ih) * W + iw] * w.data[((o * cpg + ci) * KH + kh) * KW + kw];
              }
            }
          out.data[((n * O + o) * OH + oh) * OW + ow] = acc;
        }
    }
  return out;
}

Kernel poolKernel(bool isMax) {
  return [isMax](const KernelCall& c) {
    const Tensor& x = c.x();
    int64_t planes = x.sizes[0] * x.sizes[1], H = x.sizes[2], W = x.sizes[3];
    auto [kh, kw] = pairAttr(c, "kernel_size", {});
    auto [sh, sw] = pairAttr(c, "stride", c.ints("kernel_size"));
    auto [ph, pw] = pairAttr(c, "padding", {0});
    int64_t OH = c.outSizes[2], OW = c.outSizes[3];
    Tensor out = c.output();
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = isMax ? -INFINITY : 0.0;
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j) {
              int64_t ih = oh * sh - ph + i, iw = ow * sw - pw + j;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;  // padding: -inf for max, 0 for mean
              double v = x.data[(p * H + ih) * W + iw];
              acc = isMax ? (std::isnan(v) || v > acc ? v : acc) : acc + v;
            }
          out.data[(p * OH + oh) * OW + ow] = isMax ? acc : acc / static_cast<double>(kh * kw);
        }
    return out;
  };
}

Tensor adaptiveAvgPoolKernel(const KernelCall& c) {
  const Tensor& x = c.x();
  int64_t planes = x.sizes[0] * x.sizes[1], H = x.sizes[2], W = x.sizes[3];
  int64_t OH = c.outSizes[2], OW = c.outSizes[3];
  Tensor out = c.output();
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t h0 = oh * H / OH, h1 = ((oh + 1) * H + OH - 1) / OH;
        int64_t w0 = ow * W / OW, w1 = ((ow + 1) * W + OW - 1) / OW;
        double acc = 0;
        for (int64_t i = h0; i < h1; ++i)
          for (int64_t j = w0; j < w1; ++j) acc += x.data[(p * H + i) * W + j];
        out.data[(p * OH + oh) * OW + ow] = acc / static_cast<double>((h1 - h0) * (w1 - w0));
      }
  return out;
}

Tensor embeddingKernel(const KernelCall& c) {
  const Tensor &idx = c.x(0), &w = c.x(1);
  int64_t rows = w.sizes[0], dim = w.sizes[1];
  Tensor out = c.output();
  for (int64_t i = 0; i < idx.numel(); ++i) {
    int64_t r = static_cast<int64_t>(idx.data[i]);
    if (r < 0 || r >= rows)
      c.fail("index " + std::to_string(r) + " is out of range for an embedding of " + std::to_string(rows) + " rows");
    std::copy_n(w.data.begin() + r * dim, dim, out.data.begin() + i * dim);
  }
  return out;
}

Tensor crossEntropyKernel(const KernelCall& c) {
  const Tensor &logits = c.x(0), &target = c.x(1);
  int64_t N = logits.sizes[0], C = logits.sizes[1];
  double total = 0;
  for (int64_t n = 0; n < N; ++n) {
    const double* row = logits.data.data() + n * C;
    int64_t t = static_cast<int64_t>(target.data[n]);
    if (t < 0 || t >= C) c.fail("target " + std::to_string(t) + " is out of range for " + std::to_string(C) + " classes");
    double m = *std::max_element(row, row + C), sum = 0;
    for (int64_t k = 0; k < C; ++k) sum += std::exp(row[k] - m);
    total += m + std::log(sum) - row[t];
  }
  Tensor out = c.output();
  out.data[0] = total / static_cast<double>(N);
  return out;
}

Tensor mseKernel(const KernelCall& c) {
  double total = 0;
  for (size_t i = 0; i < c.x(0).data.size(); ++i) {
    double d = c.x(0).data[i] - c.x(1).data[i];
    total += d * d;
  }
  Tensor out = c.output();
  out.data[0] = total / static_cast<double>(c.x(0).numel());
  return out;
}

}  // namespace

void addNNKernels(KernelTable& t) {
  t["matmul"] = matmulKernel;
  t["bmm"] = matmulKernel;
  t["linear"] = linearKernel;
  t["layer_norm"] = layerNormKernel;
  t["batch_norm"] = batchNormKernel;
  t["conv2d"] = conv2dKernel;
  t["max_pool2d"] = poolKernel(true);
  t["avg_pool2d"] = poolKernel(false);
  t["adaptive_avg_pool2d"] = adaptiveAvgPoolKernel;
  t["embedding"] = embeddingKernel;
  t["cross_entropy"] = crossEntropyKernel;
  t["mse_loss"] = mseKernel;
}

}  // namespace fusebox

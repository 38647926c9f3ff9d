#include <climits>

#include "core/interp/kernels.h"
#include "core/ops/shape_rules.h"

namespace fusebox {

namespace {

Tensor copyKernel(const KernelCall& c) {
  Tensor out = c.output();
  out.data = c.x().data;
  return out;
}

// out[i] = x[offset(i)] where the input strides are rearranged by `perm` (output dim d reads
// input dim perm[d]).
Tensor permuteBy(const KernelCall& c, const std::vector<int64_t>& perm) {
  const Tensor& x = c.x();
  std::vector<int64_t> inStrides = x.strides(), st(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) st[d] = inStrides[perm[d]];
  Tensor out = c.output();
  std::vector<int64_t> idx(perm.size(), 0);
  int64_t off = 0;
  for (size_t n = 0; n < out.data.size(); ++n) {
    out.data[n] = x.data[off];
    for (size_t d = perm.size(); d-- > 0;) {
      off += st[d];
      if (++idx[d] < c.outSizes[d]) break;
      off -= st[d] * c.outSizes[d];
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace

void addShapeKernels(KernelTable& t) {
  t["reshape"] = copyKernel;
  t["view"] = copyKernel;
  t["permute"] = [](const KernelCall& c) {
    std::vector<int64_t> perm;
    for (int64_t d : c.ints("dims")) perm.push_back(normalizeAxis(d, c.x().rank(), c.node.op));
    return permuteBy(c, perm);
  };
  t["transpose"] = [](const KernelCall& c) {
    std::vector<int64_t> perm(c.x().rank());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
    std::swap(perm[normalizeAxis(c.i("dim0"), perm.size(), c.node.op)],
              perm[normalizeAxis(c.i("dim1"), perm.size(), c.node.op)]);
    return permuteBy(c, perm);
  };
  t["expand"] = [](const KernelCall& c) {
    Tensor out = c.output();
    std::vector<int64_t> offs = broadcastOffsets(c.x().sizes, c.outSizes);
    for (size_t i = 0; i < offs.size(); ++i) out.data[i] = c.x().data[offs[i]];
    return out;
  };
  t["slice"] = [](const KernelCall& c) {
    const Tensor& x = c.x();
    int64_t dim = normalizeAxis(c.i("dim"), x.rank(), c.node.op);
    int64_t n = x.sizes[dim], start = c.i("start"), step = c.i("step");
    start = std::clamp(start < 0 ? start + n : start, int64_t{0}, n);
    AxisSplit in = splitAt(x.sizes, dim);
    int64_t outLen = c.outSizes[dim];
    Tensor out = c.output();
    for (int64_t o = 0; o < in.outer; ++o)
      for (int64_t k = 0; k < outLen; ++k)
        for (int64_t i = 0; i < in.inner; ++i)
          out.data[(o * outLen + k) * in.inner + i] = x.data[(o * n + start + k * step) * in.inner + i];
    return out;
  };
  t["cat"] = [](const KernelCall& c) {
    int64_t dim = normalizeAxis(c.i("dim"), c.outSizes.size(), c.node.op);
    AxisSplit outSplit = splitAt(c.outSizes, dim);
    Tensor out = c.output();
    int64_t base = 0;
    for (const Tensor* x : c.in) {
      AxisSplit s = splitAt(x->sizes, dim);
      for (int64_t o = 0; o < s.outer; ++o)
        std::copy_n(x->data.begin() + o * s.size * s.inner, s.size * s.inner,
                    out.data.begin() + (o * outSplit.size + base) * s.inner);
      base += s.size;
    }
    return out;
  };
}

}  // namespace fusebox

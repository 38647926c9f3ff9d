#include <algorithm>
#include <cmath>
#include <limits>

#include "core/interp/kernels.h"
#include "core/ops/reduction_math.h"
#include "core/ops/shape_rules.h"

namespace fusebox {

namespace {

// One row of the reduction table (mean: the sum's row, divided by the count). `dimsAttr` names the
// reduced dims ("dim" for torch ops, "dims" for prims). The output layout is the same with or
// without keepdim, so one kernel serves both.
Kernel reductionKernel(const ReductionMath& r, bool mean = false, const char* dimsAttr = "dim") {
  return [&r, mean, dimsAttr](const KernelCall& c) {
    const Tensor& x = c.x();
    auto axes = reductionAxes(c.ints(dimsAttr), x.rank(), c.node.op);
    // Map every input element onto its output element through the keepdim-shaped output.
    std::vector<int64_t> keep = x.sizes;
    for (int64_t a : axes) keep[a] = 1;
    std::vector<int64_t> target = broadcastOffsets(keep, x.sizes);
    Tensor out = c.output();
    std::fill(out.data.begin(), out.data.end(), r.identity);
    for (size_t i = 0; i < x.data.size(); ++i) {
      double& acc = out.data[target[i]];
      acc = r.step(acc, x.data[i]);
    }
    if (mean) {
      double count = static_cast<double>(x.numel()) / static_cast<double>(std::max<int64_t>(out.numel(), 1));
      for (double& v : out.data) v /= count;
    }
    return out;
  };
}

Kernel softmaxKernel(bool logForm) {
  return [logForm](const KernelCall& c) {
    const Tensor& x = c.x();
    AxisSplit s = splitAt(x.sizes, normalizeAxis(c.i("dim"), x.rank(), c.node.op));
    Tensor out = c.output();
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t in = 0; in < s.inner; ++in) {
        auto at = [&](int64_t k) { return (o * s.size + k) * s.inner + in; };
        double m = -INFINITY;
        for (int64_t k = 0; k < s.size; ++k) m = std::max(m, x.data[at(k)]);
        if (std::isinf(m) && m < 0) m = 0;  // an all -inf row gives NaN below, as in torch
        double sum = 0;
        for (int64_t k = 0; k < s.size; ++k) sum += std::exp(x.data[at(k)] - m);
        for (int64_t k = 0; k < s.size; ++k)
          out.data[at(k)] = logForm ? x.data[at(k)] - m - std::log(sum) : std::exp(x.data[at(k)] - m) / sum;
      }
    return out;
  };
}

}  // namespace

void addReductionKernels(KernelTable& t) {
  for (const ReductionMath& r : reductionMathOps()) {
    t[r.prim] = reductionKernel(r);
    t["prims." + r.prim] = reductionKernel(r, false, "dims");
  }
  t["mean"] = reductionKernel(reductionMath(ReduceOp::Sum), true);
  t["softmax"] = softmaxKernel(false);
  t["log_softmax"] = softmaxKernel(true);
}

}  // namespace fusebox

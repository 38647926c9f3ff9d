#include "core/interp/kernels.h"

#include "core/ir/verifier.h"

namespace fusebox {

void KernelCall::fail(const std::string& message) const { throw Error(describeNode(node) + ": " + message); }

const KernelTable& kernelTable() {
  static const KernelTable table = [] {
    KernelTable t;
    addElementwiseKernels(t);
    addReductionKernels(t);
    addNNKernels(t);
    addShapeKernels(t);
    addBackwardKernels(t);
    addPrimKernels(t);
    return t;
  }();
  return table;
}

std::vector<int64_t> broadcastOffsets(const std::vector<int64_t>& inSizes, const std::vector<int64_t>& outSizes) {
  size_t rank = outSizes.size(), lead = rank - inSizes.size();
  std::vector<int64_t> inStrides = contiguousStrides(inSizes);
  std::vector<int64_t> st(rank, 0);
  for (size_t i = lead; i < rank; ++i) st[i] = inSizes[i - lead] == 1 ? 0 : inStrides[i - lead];
  std::vector<int64_t> offsets(numelOf(outSizes));
  std::vector<int64_t> idx(rank, 0);
  int64_t off = 0;
  for (size_t n = 0; n < offsets.size(); ++n) {
    offsets[n] = off;
    for (size_t d = rank; d-- > 0;) {  // odometer increment, keeping the offset in step
      off += st[d];
      if (++idx[d] < outSizes[d]) break;
      off -= st[d] * outSizes[d];
      idx[d] = 0;
    }
  }
  return offsets;
}

AxisSplit splitAt(const std::vector<int64_t>& sizes, int64_t dim) {
  AxisSplit s;
  for (int64_t i = 0; i < static_cast<int64_t>(sizes.size()); ++i) {
    if (i < dim) s.outer *= sizes[i];
    else if (i == dim) s.size = sizes[i];
    else s.inner *= sizes[i];
  }
  return s;
}

}  // namespace fusebox

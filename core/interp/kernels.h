// Reference kernels of the interpreter: one per registry op, written for clarity (double
// precision, contiguous tensors), not speed.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/interp/tensor.h"
#include "core/ir/graph.h"
#include "core/ops/op_schema.h"

namespace fusebox {

struct KernelCall : AttrReader {
  const Node& node;
  const std::vector<const Tensor*>& in;
  const std::vector<int64_t>& outSizes;
  DType outDType;

  KernelCall(const Node& node, const std::vector<const Tensor*>& in, const std::vector<int64_t>& outSizes, DType outDType)
      : AttrReader{node.attrs}, node(node), in(in), outSizes(outSizes), outDType(outDType) {}
  const Tensor& x(size_t i = 0) const { return *in.at(i); }
  Tensor output() const { return Tensor(outDType, outSizes); }
  [[noreturn]] void fail(const std::string& message) const;  // names the node
};

using Kernel = std::function<Tensor(const KernelCall&)>;
using KernelTable = std::map<std::string, Kernel, std::less<>>;

const KernelTable& kernelTable();

void addElementwiseKernels(KernelTable& t);
void addReductionKernels(KernelTable& t);
void addNNKernels(KernelTable& t);
void addShapeKernels(KernelTable& t);
void addBackwardKernels(KernelTable& t);
void addPrimKernels(KernelTable& t);  // after the others: many prims reuse torch-op kernels

// For every element of a tensor of `outSizes`, the offset of the element of a tensor of
// `inSizes` that broadcasting maps to it (size-1 and missing leading dims repeat).
std::vector<int64_t> broadcastOffsets(const std::vector<int64_t>& inSizes, const std::vector<int64_t>& outSizes);

// Splits `sizes` around axis `dim` into (outer, size, inner) extents.
struct AxisSplit {
  int64_t outer = 1, size = 1, inner = 1;
};
AxisSplit splitAt(const std::vector<int64_t>& sizes, int64_t dim);

}  // namespace fusebox

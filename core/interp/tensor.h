// A concrete, contiguous (row-major) tensor for the reference interpreter. Elements are stored
// as doubles whatever the dtype: integers and bools are exact, and the interpreter rounds to the
// dtype after each op when it runs in the graph's precision.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/dtype.h"

namespace fusebox {

struct Tensor {
  DType dtype = DType::F32;
  std::vector<int64_t> sizes;
  std::vector<double> data;

  Tensor() = default;
  Tensor(DType t, std::vector<int64_t> s);  // zero-filled; LimitError over the memory budget (--max-memory)
  Tensor(DType t, std::vector<int64_t> s, std::vector<double> values);

  int64_t numel() const { return static_cast<int64_t>(data.size()); }
  size_t rank() const { return sizes.size(); }
  std::vector<int64_t> strides() const;
  std::string str(size_t maxElements = 8) const;  // "f32[2, 3] {0.1, ...}"
};

int64_t numelOf(const std::vector<int64_t>& sizes);  // ShapeError on a negative size or int64 overflow
// Bytes the interpreter holds for a tensor of `sizes` (8 per element: it stores doubles whatever
// the dtype); nullopt beyond int64.
std::optional<int64_t> interpreterBytes(const std::vector<int64_t>& sizes);
std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& sizes);

// Largest |a - b| / (atol/rtol-scaled) style comparisons used by tests and `fusebox run`.
struct Difference {
  double maxAbs = 0;
  double maxRel = 0;  // |a - b| / max(|b|, 1e-12), over elements
  bool sameShape = true;
};
Difference compareTensors(const Tensor& a, const Tensor& b);
bool allClose(const Tensor& a, const Tensor& b, double rtol, double atol);

}  // namespace fusebox

#include "core/interp/tensor.h"

#include <cmath>
#include <cstdio>

#include "core/ir/checked_math.h"
#include "core/ir/error.h"
#include "core/ir/memory_budget.h"
#include "core/ir/shape.h"

namespace fusebox {

int64_t numelOf(const std::vector<int64_t>& sizes) {
  std::optional<int64_t> n = numelWithin(sizes);
  if (!n) throw ShapeError("tensor of sizes " + shapeStr(shapeOf(sizes)) + " has a negative size or more elements than int64 can count");
  return *n;
}

std::optional<int64_t> interpreterBytes(const std::vector<int64_t>& sizes) {
  std::optional<int64_t> n = numelWithin(sizes);
  return n ? bytesOf(*n, sizeof(double)) : std::nullopt;
}

// The last line of defence: every zero-filled tensor (kernel results and temporaries) is checked
// against the memory budget before its storage is allocated. The interpreter checks named values first.
static size_t checkedCount(DType t, const std::vector<int64_t>& sizes) {
  checkMemory(interpreterBytes(sizes), "a tensor", std::string(dtypeName(t)) + shapeStr(shapeOf(sizes)));
  return static_cast<size_t>(numelOf(sizes));
}

std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> st(sizes.size(), 1);
  for (size_t i = sizes.size(); i-- > 1;) st[i - 1] = st[i] * sizes[i];
  return st;
}

Tensor::Tensor(DType t, std::vector<int64_t> s) : dtype(t), sizes(std::move(s)), data(checkedCount(t, sizes), 0.0) {}
Tensor::Tensor(DType t, std::vector<int64_t> s, std::vector<double> values)
    : dtype(t), sizes(std::move(s)), data(std::move(values)) {}

std::vector<int64_t> Tensor::strides() const { return contiguousStrides(sizes); }

std::string Tensor::str(size_t maxElements) const {
  std::string s = std::string(dtypeName(dtype)) + "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  s += "] {";
  for (size_t i = 0; i < data.size() && i < maxElements; ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", data[i]);
    s += (i ? ", " : "") + std::string(buf);
  }
  if (data.size() > maxElements) s += ", ...";
  return s + "}";
}

Difference compareTensors(const Tensor& a, const Tensor& b) {
  Difference d;
  if (a.sizes != b.sizes) {
    d.sameShape = false;
    d.maxAbs = d.maxRel = INFINITY;
    return d;
  }
  for (size_t i = 0; i < a.data.size(); ++i) {
    double x = a.data[i], y = b.data[i];
    if (x == y || (std::isnan(x) && std::isnan(y))) continue;  // equal infinities and NaN where NaN is expected match
    double diff = std::fabs(x - y);
    if (std::isnan(diff)) diff = INFINITY;
    d.maxAbs = std::max(d.maxAbs, diff);
    d.maxRel = std::max(d.maxRel, diff / std::max(std::fabs(y), 1e-12));
  }
  return d;
}

bool allClose(const Tensor& a, const Tensor& b, double rtol, double atol) {
  if (a.sizes != b.sizes) return false;
  for (size_t i = 0; i < a.data.size(); ++i) {
    double x = a.data[i], y = b.data[i];
    if (x == y || (std::isnan(x) && std::isnan(y))) continue;
    if (!(std::fabs(x - y) <= atol + rtol * std::fabs(y))) return false;
  }
  return true;
}

}  // namespace fusebox

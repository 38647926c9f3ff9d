#include "core/ir/shape.h"

#include <cassert>

#include "core/ir/checked_math.h"
#include "core/ir/error.h"

namespace fusebox {

Dim Dim::symbol(const std::string& name) {
  Dim d(1);
  d.syms_[name] = 1;
  return d;
}

Dim Dim::operator*(const Dim& o) const {
  std::optional<int64_t> c = checkedMul(coeff_, o.coeff_);
  if (!c) throw ShapeError("size " + str() + " * " + o.str() + " overflows int64");
  Dim r(*c);
  if (r.coeff_ == 0) return r;
  r.syms_ = syms_;
  for (const auto& [s, p] : o.syms_) r.syms_[s] += p;
  return r;
}

std::optional<Dim> Dim::dividedBy(const Dim& o) const {
  if (o.coeff_ == 0 || (o.coeff_ == -1 && coeff_ == INT64_MIN) || coeff_ % o.coeff_ != 0) return std::nullopt;
  Dim r(coeff_ / o.coeff_);
  r.syms_ = syms_;
  for (const auto& [s, p] : o.syms_) {
    auto it = r.syms_.find(s);
    if (it == r.syms_.end() || it->second < p) return std::nullopt;
    if ((it->second -= p) == 0) r.syms_.erase(it);
  }
  return r;
}

std::optional<Dim> Dim::plus(const Dim& o) const {
  if (syms_ != o.syms_) return std::nullopt;
  std::optional<int64_t> c = checkedAdd(coeff_, o.coeff_);
  if (!c) throw ShapeError("size " + str() + " + " + o.str() + " overflows int64");
  Dim r(*c);
  r.syms_ = syms_;
  return r;
}

Dim Dim::substitute(const std::map<std::string, int64_t>& bindings) const {
  Dim r(coeff_);
  for (const auto& [s, p] : syms_) {
    auto it = bindings.find(s);
    for (int i = 0; i < p; ++i) r = r * (it != bindings.end() ? Dim(it->second) : Dim::symbol(s));
  }
  return r;
}

std::string Dim::str() const {
  std::string out;
  if (coeff_ != 1 || syms_.empty()) out = std::to_string(coeff_);
  for (const auto& [s, p] : syms_)
    for (int i = 0; i < p; ++i) out += (out.empty() ? "" : "*") + s;
  return out;
}

Dim numel(const Shape& s) {
  // The nonzero dims' product must fit too: it is the largest stride of a layout of s, and a
  // zero-size tensor of [0, 1e11, 1e11] overflowed every later stage's stride arithmetic.
  Dim n(1), strides(1);
  for (const Dim& d : s) {
    n = n * d;
    if (!(d.isConstant() && d.value() == 0)) strides = strides * d;
  }
  return n;
}

bool isConcrete(const Shape& s) {
  for (const Dim& d : s)
    if (!d.isConstant()) return false;
  return true;
}

std::vector<int64_t> concreteSizes(const Shape& s) {
  std::vector<int64_t> out;
  out.reserve(s.size());
  for (const Dim& d : s) {
    assert(d.isConstant());
    out.push_back(d.value());
  }
  return out;
}

Shape shapeOf(const std::vector<int64_t>& sizes) { return Shape(sizes.begin(), sizes.end()); }

std::string shapeStr(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + s[i].str();
  return out + "]";
}

}  // namespace fusebox

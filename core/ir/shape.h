// Tensor sizes whose dimensions may be symbolic (B, T, B*T). A Dim is a monomial
// coeff * prod(symbol^power): enough for the views and flattens models do (e.g. reshape
// [B, T, 768] to [B*T, 768] or [B, -1]), while staying exact and simple to compare.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fusebox {

class Dim {
public:
  Dim(int64_t value = 0) : coeff_(value) {}  // NOLINT: implicit from integers on purpose
  static Dim symbol(const std::string& name);

  bool isConstant() const { return syms_.empty(); }
  int64_t value() const { return coeff_; }  // the constant (only meaningful when isConstant())
  int64_t coeff() const { return coeff_; }
  const std::map<std::string, int>& symbols() const { return syms_; }

  // Products and sums are checked: a coefficient beyond int64 throws ShapeError (no location;
  // GraphBuilder and the tracer add it), never wraps.
  Dim operator*(const Dim& o) const;
  // Exact division, or nullopt when the quotient is not a monomial with integer coefficient.
  std::optional<Dim> dividedBy(const Dim& o) const;
  // Sum of two dims with the same symbols (e.g. B + 2*B = 3*B); nullopt otherwise.
  std::optional<Dim> plus(const Dim& o) const;
  // Replaces bound symbols by their values.
  Dim substitute(const std::map<std::string, int64_t>& bindings) const;

  bool operator==(const Dim& o) const { return coeff_ == o.coeff_ && syms_ == o.syms_; }
  bool operator!=(const Dim& o) const { return !(*this == o); }
  bool operator<(const Dim& o) const { return coeff_ != o.coeff_ ? coeff_ < o.coeff_ : syms_ < o.syms_; }  // for maps

  std::string str() const;  // "768", "B", "B*T", "2*B"

private:
  int64_t coeff_ = 0;
  std::map<std::string, int> syms_;
};

using Shape = std::vector<Dim>;

Dim numel(const Shape& s);  // throws ShapeError when the count, or the product of the nonzero dims, overflows int64
bool isConcrete(const Shape& s);
std::vector<int64_t> concreteSizes(const Shape& s);  // requires isConcrete(s)
Shape shapeOf(const std::vector<int64_t>& sizes);
std::string shapeStr(const Shape& s);  // "[B, 768]"

}  // namespace fusebox

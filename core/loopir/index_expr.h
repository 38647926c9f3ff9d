// Symbolic integer expressions for sizes and indices in the loop IR: sums of terms
// coeff * atom * atom ..., where an atom is an iteration variable (with its range), a floor
// division or a modulo by a positive constant. Construction simplifies: like terms combine,
// constants fold, and div/mod rules use variable ranges (e.g. (C*m + k) // C == m when
// 0 <= k < C), so printed indices look like what a person would write and two indices can be
// compared for equality structurally.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fusebox {

class IndexExpr;

struct IndexAtom {
  enum class Kind { Var, Div, Mod };
  Kind kind = Kind::Var;
  std::string name;   // Var
  int64_t size = 1;   // Var: the variable ranges over [0, size)
  std::shared_ptr<const IndexExpr> arg;  // Div / Mod operand
  int64_t divisor = 1;                   // Div / Mod
  std::string key() const;  // canonical text, for ordering and equality
  std::string operand() const;
};

struct IndexTerm {
  int64_t coeff = 0;
  std::vector<IndexAtom> atoms;  // sorted by key; empty: a constant term
};

class IndexExpr {
public:
  IndexExpr(int64_t c = 0);  // NOLINT: constants convert implicitly
  static IndexExpr var(const std::string& name, int64_t size);

  IndexExpr operator+(const IndexExpr& o) const;
  IndexExpr operator-(const IndexExpr& o) const;
  IndexExpr operator*(const IndexExpr& o) const;
  IndexExpr floorDiv(int64_t d) const;
  IndexExpr mod(int64_t d) const;

  bool isConstant() const;
  int64_t constant() const;  // the constant term
  // Inclusive bounds assuming every variable ranges over [0, size).
  std::pair<int64_t, int64_t> bounds() const;
  int64_t minValue() const;
  int64_t maxValue() const;
  // Replaces variables (by name) with expressions, re-simplifying.
  IndexExpr substitute(const std::map<std::string, IndexExpr>& vars) const;
  int64_t evaluate(const std::map<std::string, int64_t>& vars) const;
  std::vector<std::string> variables() const;

  bool operator==(const IndexExpr& o) const { return str() == o.str(); }
  bool operator!=(const IndexExpr& o) const { return !(*this == o); }
  std::string str() const;  // C-like: "64*x0 + x1", "(x0 / 12) % 64"

  const std::vector<IndexTerm>& terms() const { return terms_; }

private:
  void normalize();
  std::vector<IndexTerm> terms_;
};

// Row-major index of a multi-index: sum(idx[i] * stride[i]) + offset.
IndexExpr linearIndex(const std::vector<IndexExpr>& idx, const std::vector<int64_t>& strides, int64_t offset = 0);
// Multi-index of a flat index over `sizes` (row-major): (p / stride_i) % size_i.
std::vector<IndexExpr> unflatten(const IndexExpr& p, const std::vector<int64_t>& sizes);

}  // namespace fusebox

#include "core/loopir/index_expr.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace fusebox {

// Div and Mod are floor division and modulo (as the interpreter evaluates them). C's / and %
// truncate toward zero, so an operand that may be negative (a pad's or a slice gradient's
// unselected lanes) prints as the preludes' fb_floordiv / fb_floormod: printed as C's, a masked
// load's index could leave its buffer although its bounds say it cannot.
std::string IndexAtom::key() const {
  switch (kind) {
    case Kind::Var: return name;
    case Kind::Div:
      if (arg->minValue() < 0) return "fb_floordiv(" + arg->str() + ", " + std::to_string(divisor) + ")";
      return "(" + operand() + " / " + std::to_string(divisor) + ")";
    case Kind::Mod:
      if (arg->minValue() < 0) return "fb_floormod(" + arg->str() + ", " + std::to_string(divisor) + ")";
      return "(" + operand() + " % " + std::to_string(divisor) + ")";
  }
  return "?";
}

// The operand, parenthesized unless it is a single atom: "(k + 28*m) / 784", not "k + 28*m / 784".
std::string IndexAtom::operand() const {
  const auto& t = arg->terms();
  bool simple = t.size() == 1 && t[0].coeff == 1 && t[0].atoms.size() == 1;
  return simple ? arg->str() : "(" + arg->str() + ")";
}

namespace {

int64_t gcd(int64_t a, int64_t b) {
  a = a < 0 ? -a : a;
  b = b < 0 ? -b : b;
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// Splits e = g*q + r with g | d, 0 <= r < g, g > 1 (the largest such g from e's coefficients);
// returns false when there is none.
bool splitCommonFactor(const IndexExpr& e, int64_t d, int64_t& g, IndexExpr& q, IndexExpr& r) {
  int64_t c = 0;
  for (const IndexTerm& t : e.terms())
    if (t.coeff != 1 && t.coeff != -1) c = gcd(c, t.coeff);
  g = gcd(c, d);
  if (g <= 1) return false;
  std::vector<IndexTerm> qs, rs;
  for (const IndexTerm& t : e.terms()) (t.coeff % g == 0 ? qs : rs).push_back(t);
  // Rebuilds terms as expressions (coefficients divided by `by`).
  auto sumOf = [](const std::vector<IndexTerm>& terms, int64_t by) {
    IndexExpr sum;
    for (const IndexTerm& t : terms) {
      IndexExpr term(t.coeff / by);
      for (const IndexAtom& a : t.atoms)
        term = term * (a.kind == IndexAtom::Kind::Var   ? IndexExpr::var(a.name, a.size)
                       : a.kind == IndexAtom::Kind::Div ? a.arg->floorDiv(a.divisor)
                                                        : a.arg->mod(a.divisor));
      sum = sum + term;
    }
    return sum;
  };
  r = sumOf(rs, 1);
  if (r.minValue() < 0 || r.maxValue() >= g) return false;
  q = sumOf(qs, g);
  return true;
}

int64_t floorDivInt(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

int64_t atomMin(const IndexAtom& a) {
  switch (a.kind) {
    case IndexAtom::Kind::Var: return 0;
    case IndexAtom::Kind::Div: return floorDivInt(a.arg->minValue(), a.divisor);
    case IndexAtom::Kind::Mod: return a.arg->minValue() >= 0 && a.arg->maxValue() < a.divisor ? a.arg->minValue() : 0;
  }
  return 0;
}

int64_t atomMax(const IndexAtom& a) {
  switch (a.kind) {
    case IndexAtom::Kind::Var: return a.size - 1;
    case IndexAtom::Kind::Div: return floorDivInt(a.arg->maxValue(), a.divisor);
    case IndexAtom::Kind::Mod: return a.arg->minValue() >= 0 && a.arg->maxValue() < a.divisor ? a.arg->maxValue() : a.divisor - 1;
  }
  return 0;
}

std::string termKey(const IndexTerm& t) {
  std::string k;
  for (const IndexAtom& a : t.atoms) k += a.key() + "*";
  return k;
}

// Bounds of a product of atoms (all atoms are >= 0 when their arguments are, which holds for
// index arithmetic; negative ranges fall back to the corner products).
void termBounds(const IndexTerm& t, int64_t& lo, int64_t& hi) {
  lo = hi = t.coeff;
  for (const IndexAtom& a : t.atoms) {
    int64_t amin = atomMin(a), amax = atomMax(a);
    int64_t c[4] = {lo * amin, lo * amax, hi * amin, hi * amax};
    lo = *std::min_element(c, c + 4);
    hi = *std::max_element(c, c + 4);
  }
}

}  // namespace

IndexExpr::IndexExpr(int64_t c) {
  if (c != 0) terms_.push_back(IndexTerm{c, {}});
}

IndexExpr IndexExpr::var(const std::string& name, int64_t size) {
  if (size == 1) return IndexExpr(0);  // a size-1 loop variable is always 0
  IndexExpr e;
  IndexAtom a;
  a.kind = IndexAtom::Kind::Var;
  a.name = name;
  a.size = size;
  e.terms_.push_back(IndexTerm{1, {a}});
  return e;
}

void IndexExpr::normalize() {
  std::map<std::string, IndexTerm> merged;
  for (IndexTerm& t : terms_) {
    std::sort(t.atoms.begin(), t.atoms.end(), [](const IndexAtom& a, const IndexAtom& b) { return a.key() < b.key(); });
    std::string k = termKey(t);
    auto it = merged.find(k);
    if (it == merged.end()) merged.emplace(k, t);
    else it->second.coeff += t.coeff;
  }
  terms_.clear();
  for (auto& [k, t] : merged)
    if (t.coeff != 0) terms_.push_back(t);
  // c*d*(e / d) + c*(e % d) == c*e: undo unflatten-then-relinearize.
  for (size_t i = 0; i < terms_.size(); ++i) {
    const IndexTerm& modTerm = terms_[i];
    if (modTerm.atoms.size() != 1 || modTerm.atoms[0].kind != IndexAtom::Kind::Mod) continue;
    const IndexAtom& m = modTerm.atoms[0];
    for (size_t j = 0; j < terms_.size(); ++j) {
      const IndexTerm& divTerm = terms_[j];
      if (divTerm.atoms.size() != 1 || divTerm.atoms[0].kind != IndexAtom::Kind::Div) continue;
      const IndexAtom& d = divTerm.atoms[0];
      // The division that pairs with (E % d): E / d, or X / (a*d) when E is itself X / a.
      std::string wantArg = m.arg->str();
      int64_t wantDivisor = m.divisor;
      const auto& et = m.arg->terms();
      if (et.size() == 1 && et[0].coeff == 1 && et[0].atoms.size() == 1 && et[0].atoms[0].kind == IndexAtom::Kind::Div) {
        wantArg = et[0].atoms[0].arg->str();
        wantDivisor = et[0].atoms[0].divisor * m.divisor;
      }
      if (d.divisor != wantDivisor || divTerm.coeff != modTerm.coeff * m.divisor || d.arg->str() != wantArg) continue;
      IndexExpr whole = *m.arg * IndexExpr(modTerm.coeff);
      std::vector<IndexTerm> rest;
      for (size_t k = 0; k < terms_.size(); ++k)
        if (k != i && k != j) rest.push_back(terms_[k]);
      rest.insert(rest.end(), whole.terms_.begin(), whole.terms_.end());
      terms_ = std::move(rest);
      normalize();
      return;
    }
  }
  // Constant term last, so "64*x0 + x1 + 3" reads naturally.
  std::stable_partition(terms_.begin(), terms_.end(), [](const IndexTerm& t) { return !t.atoms.empty(); });
}

IndexExpr IndexExpr::operator+(const IndexExpr& o) const {
  IndexExpr r = *this;
  r.terms_.insert(r.terms_.end(), o.terms_.begin(), o.terms_.end());
  r.normalize();
  return r;
}

IndexExpr IndexExpr::operator-(const IndexExpr& o) const { return *this + o * IndexExpr(-1); }

IndexExpr IndexExpr::operator*(const IndexExpr& o) const {
  IndexExpr r;
  for (const IndexTerm& a : terms_)
    for (const IndexTerm& b : o.terms_) {
      IndexTerm t{a.coeff * b.coeff, a.atoms};
      t.atoms.insert(t.atoms.end(), b.atoms.begin(), b.atoms.end());
      r.terms_.push_back(t);
    }
  r.normalize();
  return r;
}

IndexExpr IndexExpr::floorDiv(int64_t d) const {
  if (d <= 0) throw std::invalid_argument("IndexExpr::floorDiv by a non-positive constant");
  if (d == 1) return *this;
  // Terms whose coefficient d divides come out of the division exactly; the rest must stay in
  // [0, d) for the quotient to be just those terms.
  IndexExpr whole, rest;
  for (const IndexTerm& t : terms_) (t.coeff % d == 0 ? whole : rest).terms_.push_back(t);
  whole.normalize();
  rest.normalize();
  IndexExpr q;
  for (IndexTerm t : whole.terms_) q.terms_.push_back(IndexTerm{t.coeff / d, t.atoms});
  q.normalize();
  if (rest.terms_.empty()) return q;
  int64_t lo = rest.minValue(), hi = rest.maxValue();
  if (lo >= 0 && hi < d) return q;
  if (floorDivInt(lo, d) == floorDivInt(hi, d)) return q + IndexExpr(floorDivInt(lo, d));
  // e = g*q + r with 0 <= r < g and g | d: e // d == q // (d / g).
  {
    int64_t g;
    IndexExpr qq, rr;
    if (splitCommonFactor(rest, d, g, qq, rr)) return q + qq.floorDiv(d / g);
  }
  // Nested division: (e / a) / b == e / (a*b).
  if (rest.terms_.size() == 1 && rest.terms_[0].coeff == 1 && rest.terms_[0].atoms.size() == 1 &&
      rest.terms_[0].atoms[0].kind == IndexAtom::Kind::Div && q.terms_.empty())
    return rest.terms_[0].atoms[0].arg->floorDiv(rest.terms_[0].atoms[0].divisor * d);
  IndexAtom a;
  a.kind = IndexAtom::Kind::Div;
  a.arg = std::make_shared<IndexExpr>(rest);
  a.divisor = d;
  IndexExpr r = q;
  r.terms_.push_back(IndexTerm{1, {a}});
  r.normalize();
  return r;
}

IndexExpr IndexExpr::mod(int64_t d) const {
  if (d <= 0) throw std::invalid_argument("IndexExpr::mod by a non-positive constant");
  if (d == 1) return IndexExpr(0);
  IndexExpr rest;
  for (const IndexTerm& t : terms_)
    if (t.coeff % d != 0) rest.terms_.push_back(IndexTerm{t.coeff, t.atoms});
  rest.normalize();
  if (rest.terms_.empty()) return IndexExpr(0);
  if (rest.minValue() >= 0 && rest.maxValue() < d) return rest;
  {  // e = g*q + r with 0 <= r < g and g | d: e % d == g*(q % (d / g)) + r
    int64_t g;
    IndexExpr qq, rr;
    if (splitCommonFactor(rest, d, g, qq, rr)) return qq.mod(d / g) * IndexExpr(g) + rr;
  }
  IndexAtom a;
  a.kind = IndexAtom::Kind::Mod;
  a.arg = std::make_shared<IndexExpr>(rest);
  a.divisor = d;
  IndexExpr r;
  r.terms_.push_back(IndexTerm{1, {a}});
  return r;
}

bool IndexExpr::isConstant() const { return terms_.empty() || (terms_.size() == 1 && terms_[0].atoms.empty()); }

int64_t IndexExpr::constant() const {
  for (const IndexTerm& t : terms_)
    if (t.atoms.empty()) return t.coeff;
  return 0;
}

std::pair<int64_t, int64_t> IndexExpr::bounds() const {
  int64_t lo = 0, hi = 0;
  for (const IndexTerm& t : terms_) {
    int64_t tlo, thi;
    termBounds(t, tlo, thi);
    lo += tlo;
    hi += thi;
  }
  return {lo, hi};
}

int64_t IndexExpr::minValue() const { return bounds().first; }
int64_t IndexExpr::maxValue() const { return bounds().second; }

IndexExpr IndexExpr::substitute(const std::map<std::string, IndexExpr>& vars) const {
  IndexExpr r;
  for (const IndexTerm& t : terms_) {
    IndexExpr term(t.coeff);
    for (const IndexAtom& a : t.atoms) {
      IndexExpr x;
      switch (a.kind) {
        case IndexAtom::Kind::Var: {
          auto it = vars.find(a.name);
          x = it != vars.end() ? it->second : IndexExpr::var(a.name, a.size);
          break;
        }
        case IndexAtom::Kind::Div: x = a.arg->substitute(vars).floorDiv(a.divisor); break;
        case IndexAtom::Kind::Mod: x = a.arg->substitute(vars).mod(a.divisor); break;
      }
      term = term * x;
    }
    r = r + term;
  }
  return r;
}

int64_t IndexExpr::evaluate(const std::map<std::string, int64_t>& vars) const {
  int64_t s = 0;
  for (const IndexTerm& t : terms_) {
    int64_t v = t.coeff;
    for (const IndexAtom& a : t.atoms) {
      switch (a.kind) {
        case IndexAtom::Kind::Var: v *= vars.at(a.name); break;
        case IndexAtom::Kind::Div: v *= floorDivInt(a.arg->evaluate(vars), a.divisor); break;
        case IndexAtom::Kind::Mod: {
          int64_t m = a.arg->evaluate(vars) % a.divisor;
          v *= m < 0 ? m + a.divisor : m;
          break;
        }
      }
    }
    s += v;
  }
  return s;
}

std::vector<std::string> IndexExpr::variables() const {
  std::set<std::string> out;
  std::function<void(const IndexExpr&)> walk = [&](const IndexExpr& e) {
    for (const IndexTerm& t : e.terms_)
      for (const IndexAtom& a : t.atoms) {
        if (a.kind == IndexAtom::Kind::Var) out.insert(a.name);
        else walk(*a.arg);
      }
  };
  walk(*this);
  return {out.begin(), out.end()};
}

std::string IndexExpr::str() const {
  if (terms_.empty()) return "0";
  std::string s;
  for (size_t i = 0; i < terms_.size(); ++i) {
    const IndexTerm& t = terms_[i];
    int64_t c = t.coeff;
    if (i > 0) {
      s += c < 0 ? " - " : " + ";
      c = c < 0 ? -c : c;
    } else if (c < 0 && !t.atoms.empty()) {
      s += "-";
      c = -c;
    }
    std::string body;
    for (const IndexAtom& a : t.atoms) body += (body.empty() ? "" : "*") + a.key();
    if (t.atoms.empty()) s += std::to_string(c);
    else s += (c == 1 ? "" : std::to_string(c) + "*") + body;
  }
  return s;
}

IndexExpr linearIndex(const std::vector<IndexExpr>& idx, const std::vector<int64_t>& strides, int64_t offset) {
  IndexExpr r(offset);
  for (size_t i = 0; i < idx.size(); ++i) r = r + idx[i] * IndexExpr(strides[i]);
  return r;
}

std::vector<IndexExpr> unflatten(const IndexExpr& p, const std::vector<int64_t>& sizes) {
  std::vector<IndexExpr> out(sizes.size());
  int64_t stride = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    out[i] = sizes[i] == 1 ? IndexExpr(0) : p.floorDiv(stride).mod(sizes[i]);
    stride *= sizes[i];
  }
  return out;
}

}  // namespace fusebox

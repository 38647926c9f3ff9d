#include "core/fuzz/program_generator.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <regex>
#include <set>

#include "core/ops/binary_math.h"
#include "core/ops/reduction_math.h"

namespace fusebox::fuzz {

namespace {

// splitmix64: a portable, seedable generator (std distributions differ between libraries).
class Rng {
public:
  // The seed is mixed into the state: seeds are consecutive in a campaign, and splitmix states
  // one increment apart are one stream shifted by a step (their programs were near copies).
  explicit Rng(uint64_t seed) : state_(seed) { state_ = next() ^ 0x632BE59BD9B4E019ull; }
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int64_t below(int64_t n) { return n <= 1 ? 0 : static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
  int64_t range(int64_t lo, int64_t hi) { return lo + below(hi - lo + 1); }  // inclusive
  bool chance(double p) { return static_cast<double>(next() >> 11) / 9007199254740992.0 < p; }
  template <class T>
  const T& pick(const std::vector<T>& v) { return v[static_cast<size_t>(below(static_cast<int64_t>(v.size())))]; }

private:
  uint64_t state_;
};

using Shape = std::vector<int64_t>;

// A bound of |op(x)| over `count` reduced elements of magnitude <= mag (sum, mean, amax, amin;
// prod is only drawn for mag <= 1, where mag bounds it too).
double reducedMagnitude(const std::string& op, double mag, int64_t count) {
  const ReductionMath* r = findReductionByPrim(op);
  return r && r->op == ReduceOp::Sum ? mag * static_cast<double>(count) : mag;
}

// Whether reduction `op`'s result is one of its inputs, so it is exact wherever they are.
bool selectsAnInput(const std::string& op) {
  const ReductionMath* r = findReductionByPrim(op);
  return r && r->exactInAnyOrder;
}

enum class Kind { F32, I64, Bool };

struct Val {
  std::string name;
  Kind kind;
  Shape shape;
  std::string paramScope;  // params: only visible inside this scope
  bool isParam = false;
  double mag = 5;          // rough bound on |value|: keeps exp/pow finite
  bool exact = true;       // bit-identical in every backend (inputs, views, max/min, ...): safe to compare or floor
  int64_t lo = 0, hi = 0;  // integer inputs: their range (embedding indices)
  bool knownRange = false;
};

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string shapeText(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

std::string typeText(Kind k, const Shape& s) {
  return std::string(k == Kind::F32 ? "f32" : k == Kind::I64 ? "i64" : "bool") + shapeText(s);
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

bool broadcastable(const Shape& a, const Shape& b) {
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    int64_t x = a[a.size() - 1 - i], y = b[b.size() - 1 - i];
    if (x != y && x != 1 && y != 1) return false;
  }
  return true;
}

Shape broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1, y = i < b.size() ? b[b.size() - 1 - i] : 1;
    out[out.size() - 1 - i] = x == 1 ? y : x;
  }
  return out;
}

class ProgramGenerator {
public:
  ProgramGenerator(uint64_t seed, const GeneratorOptions& o) : rng_(seed), o_(o) { prog_.name = "fuzz_" + std::to_string(seed); }

  FuzzProgram run() {
    int inputs = static_cast<int>(rng_.range(1, 3));
    for (int i = 0; i < inputs; ++i) newInput(rng_.chance(0.15) ? Kind::I64 : Kind::F32, drawShape());
    if (!any([](const Val& v) { return v.kind == Kind::F32; })) newInput(Kind::F32, drawShape());
    int ops = static_cast<int>(rng_.range(o_.minOps, std::max(o_.minOps, o_.maxOps)));
    int made = 0;
    for (int tries = 0; made < ops && tries < ops * 20; ++tries)
      if (step()) ++made;
    finish();
    return prog_;
  }

private:
  // ----- shapes -----
  int64_t drawSize() {
    static const std::vector<int64_t> sizes = {1, 1, 1, 2, 2, 3, 3, 5, 5, 7, 7, 4, 6, 8, 9, 16, 17, 31, 33, 127};
    return rng_.pick(sizes);
  }
  Shape fit(Shape s) {
    while (numel(s) > o_.maxElements) *std::max_element(s.begin(), s.end()) /= 2;
    return s;
  }
  Shape drawShape() {
    if (rng_.chance(0.06)) return fit({rng_.range(1, 3), rng_.range(1025, 1300)});  // a row longer than one block
    static const std::vector<int> ranks = {0, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4};
    Shape s(static_cast<size_t>(rng_.pick(ranks)));
    for (int64_t& d : s) d = drawSize();
    return fit(s);
  }
  // A shape that broadcasts with `s`, in either direction: dims kept, set to 1, leading dims
  // dropped or added, and size-1 dims of `s` widened.
  Shape broadcastPartner(const Shape& s) {
    Shape out;
    size_t drop = s.empty() ? 0 : static_cast<size_t>(rng_.below(static_cast<int64_t>(s.size()) + 1));
    if (rng_.chance(0.5)) drop = 0;
    if (drop == 0 && rng_.chance(0.15)) out.push_back(drawSize());  // a new leading dim
    for (size_t i = drop; i < s.size(); ++i) {
      if (s[i] == 1) out.push_back(rng_.chance(0.5) ? drawSize() : 1);
      else out.push_back(rng_.chance(0.35) ? 1 : s[i]);
    }
    // Too large: all ones still broadcasts (halving a dim would not).
    return numel(out) > o_.maxElements ? Shape(out.size(), 1) : out;
  }

  // ----- values -----
  template <class P>
  bool any(P p) const { return std::any_of(vals_.begin(), vals_.end(), p); }

  bool visible(const Val& v) const {
    if (!v.isParam) return true;
    return scope_ == v.paramScope;
  }
  // A visible value satisfying `p`: half the time the newest (so ops chain), else any (shared subexpressions).
  const Val* pick(const std::function<bool(const Val&)>& p) {
    std::vector<const Val*> c;
    for (const Val& v : vals_)
      if (visible(v) && p(v)) c.push_back(&v);
    if (c.empty()) return nullptr;
    if (rng_.chance(0.5)) return c.back();
    return rng_.pick(c);
  }

  const Val& newInput(Kind k, Shape s) {
    Val v;
    v.name = "x" + std::to_string(inputs_++);
    v.kind = k;
    v.shape = std::move(s);
    ProgramInput in{v.name, typeText(k, v.shape), ""};
    if (k == Kind::I64) {
      static const std::vector<std::pair<int64_t, int64_t>> ranges = {{0, 2}, {0, 7}, {-5, 5}, {0, 100}, {-3, 1}};
      auto [lo, hi] = rng_.pick(ranges);
      in.range = "range(" + std::to_string(lo) + ", " + std::to_string(hi) + ")";
      v.lo = lo, v.hi = hi - 1, v.knownRange = true, v.mag = std::max(std::abs(lo), std::abs(hi));
    }
    prog_.inputs.push_back(in);
    vals_.push_back(v);
    return vals_.back();
  }

  const Val& newParam(Shape s, double std) {
    std::string seed = std::to_string(params_ + 1);
    std::string init = rng_.chance(0.7) ? "randn(seed=" + seed + ", std=" + num(std) + ")"
                                        : "uniform(seed=" + seed + ", low=" + num(-std) + ", high=" + num(std) + ")";
    return newParam(std::move(s), init, 5 * std);
  }
  const Val& newParam(Shape s, const std::string& init, double mag) {
    Val v;
    v.name = "p" + std::to_string(params_++);
    v.kind = Kind::F32;
    v.shape = std::move(s);
    v.isParam = true;
    v.paramScope = scope_;
    v.mag = mag;
    prog_.stmts.push_back({scope_, v.name, "param " + v.name + ": " + typeText(Kind::F32, v.shape) + " = " + init, true});
    vals_.push_back(v);
    return vals_.back();
  }

  // A new value, or nothing when it would be too large.
  bool emit(const std::string& expr, Kind k, const Shape& s, double mag, bool exact) {
    if (numel(s) > o_.maxElements) return false;
    Val v;
    v.name = "v" + std::to_string(values_++);
    v.kind = k;
    v.shape = s;
    v.mag = std::min(mag, 1e30);
    v.exact = exact;
    prog_.stmts.push_back({scope_, v.name, v.name + " = " + expr, false});
    vals_.push_back(v);
    return true;
  }

  // Params live in a scope: a new top-level one, one nested in the last, or none.
  void enterParamScope() {
    double r = static_cast<double>(rng_.below(100)) / 100;
    std::string name = "s" + std::to_string(scopes_++);
    if (r < 0.45) scope_ = name;
    else if (r < 0.75 && !lastScope_.empty()) scope_ = lastScope_ + "." + name;
    else scope_ = "";
    if (!scope_.empty()) lastScope_ = scope_;
  }
  void leaveScope() { scope_.clear(); }

  // An f32 operand bounded enough for exp/pow: wrapped in tanh when it may be large.
  std::string bounded(const Val& v, double limit, double& mag) {
    if (v.mag <= limit) return mag = v.mag, v.name;
    mag = 1;
    return "tanh(" + v.name + ")";
  }

  static bool isF(const Val& v) { return v.kind == Kind::F32; }

  // ----- ops -----
  bool step() {
    switch (rng_.below(15)) {
      case 0: case 1: return unaryOp();
      case 2: case 3: return binaryOp();
      case 4: case 5: return reduction(false);
      case 6: return reduction(true);
      case 7: return viewOp(nullptr) ? true : false;
      case 8: return matmulOp();
      case 9: return layerNorm();
      case 10: return selectOp();
      case 11: return integerOp();
      case 12: return catOrLoss();
      case 13: return poolOrConv();
      default: return viewThenReduce();
    }
  }

  bool unaryOp() {
    const Val* x = pick(isF);
    if (!x) return false;
    static const std::vector<std::string> plain = {"relu", "neg", "abs"};
    static const std::vector<std::string> squash = {"tanh", "sigmoid", "sin", "cos", "atan", "erf"};
    double m;
    switch (rng_.below(8)) {
      case 0: return emit(rng_.pick(plain) + "(" + x->name + ")", Kind::F32, x->shape, x->mag, x->exact);
      case 1: return emit(rng_.pick(squash) + "(" + x->name + ")", Kind::F32, x->shape, 1.6, false);
      case 2: {
        std::string e = rng_.chance(0.5) ? "silu(" + x->name + ")"
                      : rng_.chance(0.5) ? "gelu(" + x->name + ")" : "gelu(" + x->name + ", approximate=\"tanh\")";
        return emit(e, Kind::F32, x->shape, x->mag + 1, false);
      }
      case 3: {
        std::string a = bounded(*x, 10, m);
        return emit("exp(" + a + ")", Kind::F32, x->shape, std::exp(m), false);
      }
      case 4: {  // restricted domains made valid
        struct Restricted {
          std::string op;
          double (*mag)(double);  // a bound of |op(|x| + 0.5)| for |x| <= mag
        };
        static const std::vector<Restricted> ops = {{"log", [](double m) { return std::sqrt(m) + 2; }},
                                                    {"sqrt", [](double m) { return std::sqrt(m) + 2; }},
                                                    {"rsqrt", [](double) { return 1.5; }}};
        const Restricted& r = rng_.pick(ops);
        return emit(r.op + "(abs(" + x->name + ") + 0.5)", Kind::F32, x->shape, r.mag(x->mag), false);
      }
      case 5:  // floor/round only of exact values: a reassociated sum could land on the other side of an integer
        if (!x->exact) return emit("relu(" + x->name + ") * 0.5", Kind::F32, x->shape, x->mag, false);
        return emit(std::string(rng_.chance(0.5) ? "floor" : "round") + "(" + x->name + " * 2.0)", Kind::F32, x->shape, 2 * x->mag + 1,
                    x->exact);
      case 6: {  // the mask is a counter-based hash of the seed and the element: the same in every backend
        static const std::vector<double> ps = {0.0, 0.1, 0.5, 0.9};
        double p = rng_.pick(ps);
        bool training = rng_.chance(0.8);
        std::string e = "dropout(" + x->name + ", p=" + num(p) + ", seed=" + std::to_string(rng_.range(0, 1000)) +
                        (training ? "" : ", training=false") + ")";
        return emit(e, Kind::F32, x->shape, training ? x->mag / (1 - p) : x->mag, !training && x->exact);
      }
      default: {
        std::string a = bounded(*x, 8, m);
        static const std::vector<std::string> exps = {"2.0", "3.0", "0.5", "-1.0"};
        std::string e = rng_.pick(exps);
        double mag = e == "3.0" ? std::pow(m + 0.5, 3) : e == "2.0" ? std::pow(m + 0.5, 2) : e == "0.5" ? std::sqrt(m) + 1 : 2;
        return emit("pow(abs(" + a + ") + 0.5, " + e + ")", Kind::F32, x->shape, mag, false);
      }
    }
  }

  // The second operand of a broadcasting binary op: an existing value, a new input, or a scalar.
  std::string partner(const Val& a, Kind k, Shape& shape, double& mag, bool& exact) {
    double r = static_cast<double>(rng_.below(100)) / 100;
    if (r < 0.15) {
      shape = {};
      mag = 2;
      return k == Kind::F32 ? num(static_cast<double>(rng_.range(-20, 20)) / 8) : std::to_string(rng_.range(-3, 3));
    }
    if (r < 0.2) {  // a constant tensor: full(...) or arange along the last dim
      if (rng_.chance(0.5) || a.shape.empty()) {
        shape = broadcastPartner(a.shape);
        mag = 2;
        std::string value = k == Kind::F32 ? num(static_cast<double>(rng_.range(-20, 20)) / 8) : std::to_string(rng_.range(-3, 3));
        return "full(" + shapeText(shape) + ", " + value + (k == Kind::F32 ? "" : ", dtype=\"i64\"") + ")";
      }
      shape = {a.shape.back()};
      mag = static_cast<double>(a.shape.back());
      std::string range = "arange(" + std::to_string(a.shape.back()) + ")";
      return k == Kind::F32 ? "to(" + range + ", dtype=\"f32\")" : range;
    }
    if (r < 0.6) {
      const Val* b = pick([&](const Val& v) { return v.kind == k && broadcastable(v.shape, a.shape) && &v != &a; });
      if (b) return shape = b->shape, mag = b->mag, exact = b->exact, b->name;
    }
    const Val& b = newInput(k, broadcastPartner(a.shape));
    shape = b.shape;
    mag = b.mag;
    exact = true;
    return b.name;
  }

  bool binaryOp() {
    const Val* a = pick(isF);
    if (!a) return false;
    std::string an = a->name;
    double am = a->mag;
    bool ae = a->exact;
    Shape as = a->shape, bs;
    double bm = 0;
    bool be = true;
    std::string b = partner(*a, Kind::F32, bs, bm, be);
    Shape out = broadcast(as, bs);
    bool swap = rng_.chance(0.3);
    std::string l = swap ? b : an, r = swap ? an : b;
    if (rng_.chance(0.15)) {  // a table op without a case below (atan2, and any added later)
      static const std::vector<std::string> known = {"add", "sub", "mul", "div", "pow", "maximum", "minimum"};
      std::vector<const BinaryMath*> others;
      for (const BinaryMath& op : binaryMathOps())
        if (op.torchOp && op.result == BinaryMath::Result::SameAsInputs && std::find(known.begin(), known.end(), op.name) == known.end())
          others.push_back(&op);
      if (!others.empty()) return emit(rng_.pick(others)->name + "(" + l + ", " + r + ")", Kind::F32, out, am + bm + 4, false);
    }
    switch (rng_.below(7)) {
      case 0: return emit(rng_.chance(0.5) ? l + " + " + r : "add(" + l + ", " + r + ")", Kind::F32, out, am + bm, false);
      case 1: return emit(rng_.chance(0.5) ? l + " - " + r : "sub(" + l + ", " + r + ")", Kind::F32, out, am + bm, false);
      case 2: return emit(rng_.chance(0.5) ? l + " * " + r : "mul(" + l + ", " + r + ")", Kind::F32, out, am * bm, false);
      case 3: return emit("div(" + l + ", abs(" + r + ") + 0.5)", Kind::F32, out, 2 * (swap ? bm : am), false);
      case 4: return emit("maximum(" + l + ", " + r + ")", Kind::F32, out, std::max(am, bm), ae && be);
      case 5: return emit("minimum(" + l + ", " + r + ")", Kind::F32, out, std::max(am, bm), ae && be);
      default: {
        if (am > 8 || bm > 3) return emit("maximum(" + l + ", " + r + ")", Kind::F32, out, std::max(am, bm), ae && be);
        return emit("pow(abs(" + an + ") + 0.5, " + b + ")", Kind::F32, out, std::pow(am + 0.5, std::max(bm, 1.0)) + 2, false);
      }
    }
  }

  std::string axisText(int64_t axis, size_t rank) {
    return std::to_string(rng_.chance(0.3) ? axis - static_cast<int64_t>(rank) : axis);
  }

  bool reduction(bool softmaxLike) { return reduceValue(pick([](const Val& v) { return isF(v) && !v.shape.empty(); }), softmaxLike); }

  bool reduceValue(const Val* x, bool softmaxLike) {
    if (!x) return false;
    size_t rank = x->shape.size();
    if (softmaxLike) {
      int64_t axis = rng_.below(static_cast<int64_t>(rank));
      bool log = rng_.chance(0.5);
      std::string e = std::string(log ? "log_softmax(" : "softmax(") + x->name + ", " + axisText(axis, rank) + ")";
      return emit(e, Kind::F32, x->shape, log ? 2 * x->mag + std::log(x->shape[axis]) + 1 : 1, false);
    }
    // prod only of values within [-1, 1] (tanh, sigmoid, ...): its magnitude stays bounded.
    std::vector<std::string> ops = {"sum", "mean", "amax", "amin"};
    if (x->mag <= 1) ops.push_back("prod");
    std::string op = rng_.pick(ops);
    std::vector<int64_t> axes;
    bool all = rng_.chance(0.12);
    if (!all) {
      for (size_t i = 0; i < rank; ++i)
        if (rng_.chance(0.4)) axes.push_back(static_cast<int64_t>(i));
      if (axes.empty()) axes.push_back(rng_.below(static_cast<int64_t>(rank)));
    }
    bool keep = rng_.chance(0.4);
    Shape out;
    int64_t count = 1;
    for (size_t i = 0; i < rank; ++i) {
      bool reduced = all || std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end();
      if (reduced) count *= x->shape[i];
      if (!reduced) out.push_back(x->shape[i]);
      else if (keep) out.push_back(1);
    }
    std::string list = "[";
    for (size_t i = 0; i < axes.size(); ++i) list += (i ? ", " : "") + axisText(axes[i], rank);
    list += "]";
    std::string e = op + "(" + x->name + ", " + list + (keep ? ", keepdim=true" : "") + ")";
    return emit(e, Kind::F32, out, reducedMagnitude(op, x->mag, count), selectsAnInput(op) && x->exact);
  }

  // A view of some value (any dtype); `out` gets the new value's index.
  bool viewOp(const Val* x) {
    if (!x) x = pick([](const Val& v) { return !v.isParam || true; });
    if (!x) return false;
    Val src = *x;
    Shape s = src.shape;
    size_t rank = s.size();
    std::string e;
    Shape out = s;
    switch (rng_.below(6)) {
      case 0: {
        if (rank < 2) return false;
        std::vector<int64_t> perm(rank);
        std::iota(perm.begin(), perm.end(), 0);
        for (size_t i = rank - 1; i > 0; --i) std::swap(perm[i], perm[static_cast<size_t>(rng_.below(static_cast<int64_t>(i) + 1))]);
        std::string list = "[";
        for (size_t i = 0; i < rank; ++i) list += (i ? ", " : "") + std::to_string(perm[i]), out[i] = s[static_cast<size_t>(perm[i])];
        e = "permute(" + src.name + ", " + list + "])";
        break;
      }
      case 1: {
        if (rank < 2) return false;
        int64_t a = rng_.below(static_cast<int64_t>(rank)), b = rng_.below(static_cast<int64_t>(rank));
        std::swap(out[static_cast<size_t>(a)], out[static_cast<size_t>(b)]);
        e = "transpose(" + src.name + ", " + axisText(a, rank) + ", " + axisText(b, rank) + ")";
        break;
      }
      case 2: {
        out = reshapeTarget(s);
        std::string list = "[";
        int64_t minus = rng_.chance(0.3) && !out.empty() ? rng_.below(static_cast<int64_t>(out.size())) : -1;
        for (size_t i = 0; i < out.size(); ++i) list += (i ? ", " : "") + (static_cast<int64_t>(i) == minus ? std::string("-1") : std::to_string(out[i]));
        e = std::string(rng_.chance(0.8) ? "reshape(" : "view(") + src.name + ", " + list + "])";
        break;
      }
      case 3: {
        if (rank < 1) return false;
        size_t d = static_cast<size_t>(rng_.below(static_cast<int64_t>(rank)));
        int64_t n = s[d];
        int64_t start = rng_.below(n), step = rng_.chance(0.6) ? 1 : rng_.range(2, 3);
        int64_t end = rng_.range(start + 1, n);
        out[d] = (end - start - 1) / step + 1;
        std::string st = rng_.chance(0.25) && start > 0 ? std::to_string(start - n) : std::to_string(start);
        e = "slice(" + src.name + ", " + axisText(static_cast<int64_t>(d), rank) + ", " + st + ", " + std::to_string(end) +
            (step != 1 ? ", " + std::to_string(step) : "") + ")";
        break;
      }
      case 4: {
        bool widened = false;
        for (int64_t& d : out)
          if (d == 1 && rng_.chance(0.7)) d = drawSize(), widened = true;
        if (rng_.chance(0.3) || !widened) out.insert(out.begin(), rng_.range(2, 5));
        e = "expand(" + src.name + ", " + shapeText(out) + ")";
        break;
      }
      default: {
        if (rank < 1) return false;
        Shape sq;  // squeeze the size-1 dims, or unsqueeze one
        for (int64_t d : s)
          if (d != 1) sq.push_back(d);
        if (sq.size() == s.size()) sq.insert(sq.begin() + rng_.below(static_cast<int64_t>(s.size()) + 1), 1);
        out = sq;
        e = "reshape(" + src.name + ", " + shapeText(out) + ")";
      }
    }
    return emit(e, src.kind, out, src.mag, src.exact);
  }

  // A shape with the same element count: flattened, adjacent dims merged, or a dim split.
  Shape reshapeTarget(const Shape& s) {
    int64_t n = numel(s);
    switch (rng_.below(3)) {
      case 0: return {n};
      case 1: {
        if (s.size() < 2) return {1, n};
        size_t i = static_cast<size_t>(rng_.below(static_cast<int64_t>(s.size()) - 1));
        Shape out(s.begin(), s.begin() + static_cast<long>(i));
        out.push_back(s[i] * s[i + 1]);
        out.insert(out.end(), s.begin() + static_cast<long>(i) + 2, s.end());
        return out;
      }
      default: {
        if (s.empty()) return {1};
        size_t i = static_cast<size_t>(rng_.below(static_cast<int64_t>(s.size())));
        std::vector<int64_t> divisors;
        for (int64_t d = 1; d <= s[i]; ++d)
          if (s[i] % d == 0) divisors.push_back(d);
        int64_t a = rng_.pick(divisors);
        Shape out(s.begin(), s.begin() + static_cast<long>(i));
        out.push_back(a);
        out.push_back(s[i] / a);
        out.insert(out.end(), s.begin() + static_cast<long>(i) + 1, s.end());
        return out;
      }
    }
  }

  bool viewThenReduce() {
    const Val* x = pick([](const Val& v) { return isF(v) && !v.shape.empty(); });
    if (!x || !viewOp(x)) return false;
    const Val* v = &vals_.back();
    if (v->shape.empty()) return true;
    return reduceValue(v, rng_.chance(0.3)) || true;
  }

  bool matmulOp() {
    const Val* x = pick([](const Val& v) { return isF(v) && !v.shape.empty() && !v.isParam; });
    if (!x) return false;
    Val a = *x;
    int64_t k = a.shape.back();
    double std = 1.0 / std::sqrt(static_cast<double>(k));
    int64_t m = drawSize();
    if (k * m > o_.maxElements) m = 1;
    double mag = std::min(a.mag, 5.0) * 5 + 1;
    auto bound = [&](const Val& v) { return v.mag > 20 ? "tanh(" + v.name + ")" : v.name; };
    switch (rng_.below(4)) {
      case 0: {  // linear with params in a scope
        enterParamScope();
        std::string w = newParam({m, k}, std).name;
        std::string b = rng_.chance(0.6) ? newParam({m}, 0.1).name : "";
        Shape out = a.shape;
        out.back() = m;
        bool ok = emit("linear(" + bound(a) + ", " + w + (b.empty() ? "" : ", " + b) + ")", Kind::F32, out, mag, false);
        leaveScope();
        return ok;
      }
      case 1: {  // a @ a^T: a shared subexpression
        if (a.shape.size() < 2) return false;
        Shape out = a.shape;
        out.back() = a.shape[a.shape.size() - 2];
        return emit("matmul(" + bound(a) + ", transpose(" + bound(a) + ", -2, -1))", Kind::F32, out, mag * mag, false);
      }
      case 2: {  // torch.matmul's broadcasting: 1-D operands, batched lhs with a 2-D or 3-D rhs
        if (a.shape.size() > 3) return false;
        Shape bs = rng_.chance(0.2) ? Shape{k} : Shape{k, m};
        if (a.shape.size() == 3 && bs.size() == 2 && rng_.chance(0.5)) bs.insert(bs.begin(), rng_.chance(0.5) ? 1 : a.shape[0]);
        const Val& b = newInput(Kind::F32, bs);
        Shape out(a.shape.begin(), a.shape.end() - 1);
        if (bs.size() == 3 && a.shape.size() == 3) out[0] = std::max(a.shape[0], bs[0]);
        if (bs.size() >= 2) out.push_back(m);
        return emit("matmul(" + bound(a) + ", " + b.name + ")", Kind::F32, out, mag * 5, false);
      }
      default: {  // bmm
        if (a.shape.size() != 3) return false;
        const Val& b = newInput(Kind::F32, {a.shape[0], k, m});
        return emit("bmm(" + bound(a) + ", " + b.name + ")", Kind::F32, {a.shape[0], a.shape[1], m}, mag * 5, false);
      }
    }
  }

  bool layerNorm() {
    const Val* x = pick([](const Val& v) { return isF(v) && !v.shape.empty() && !v.isParam; });
    if (!x) return false;
    Val a = *x;
    if (a.shape.size() >= 2 && rng_.chance(0.35)) return batchNorm(a);
    size_t tail = a.shape.size() >= 2 && rng_.chance(0.3) ? 2 : 1;
    Shape ns(a.shape.end() - static_cast<long>(tail), a.shape.end());
    // A derived row may be constant (a masked_fill of everything): its normalization divides
    // rounding noise by sqrt(eps), which no tolerance covers. Fresh random data keeps rows varied.
    std::string operand = a.name;
    if (a.name[0] != 'x') operand = (a.mag > 100 ? "tanh(" + a.name + ")" : a.name) + " + " + newInput(Kind::F32, ns).name;
    enterParamScope();
    std::string args = operand + ", " + shapeText(ns);
    if (rng_.chance(0.7)) {
      args += ", " + newParam(ns, 0.5).name;
      if (rng_.chance(0.6)) args += ", " + newParam(ns, 0.2).name;
    }
    bool ok = emit("layer_norm(" + args + ")", Kind::F32, a.shape, 10, false);
    leaveScope();
    return ok;
  }

  // batch_norm over dim 1: batch statistics (training) or running ones, whose variance stays positive.
  bool batchNorm(const Val& a) {
    bool training = rng_.chance(0.6);
    Shape cs = {a.shape[1]};
    std::string operand = a.name;  // as in layerNorm: a derived channel may be constant
    if (training && a.name[0] != 'x') operand = (a.mag > 100 ? "tanh(" + a.name + ")" : a.name) + " + " + newInput(Kind::F32, a.shape).name;
    enterParamScope();
    std::string w = newParam(cs, 0.5).name, b = newParam(cs, 0.2).name, mean = newParam(cs, 1.0).name;
    std::string var = newParam(cs, "uniform(seed=" + std::to_string(params_) + ", low=0.5, high=1.5)", 1.5).name;
    int64_t count = numel(a.shape) / a.shape[1];
    double mag = training ? 2.5 * std::sqrt(static_cast<double>(count)) + 1 : 3.5 * (std::min(a.mag, 100.0) + 5) + 1;
    bool ok = emit("batch_norm(" + operand + ", " + w + ", " + b + ", " + mean + ", " + var + (training ? ", training=true" : "") + ")",
                   Kind::F32, a.shape, mag, false);
    leaveScope();
    return ok;
  }

  std::string comparison() {
    static const std::vector<std::string> ops = {"gt", "lt", "ge", "le", "eq", "ne"};
    return rng_.pick(ops);
  }

  // A bool mask of `shape` (or broadcasting to it): a comparison of exact values.
  std::string mask(const Val& x, Shape& maskShape) {
    const Val* y = pick([&](const Val& v) {
      return v.kind == x.kind && v.exact && broadcastable(v.shape, x.shape) && broadcast(v.shape, x.shape) == x.shape;
    });
    if (rng_.chance(0.2)) {  // a bool input
      const Val& m = newInput(Kind::Bool, broadcastPartnerInto(x.shape));
      maskShape = m.shape;
      return m.name;
    }
    if (!y || !x.exact || rng_.chance(0.3)) {
      const Val& m = rng_.chance(0.5) ? newInput(x.kind == Kind::I64 ? Kind::I64 : Kind::F32, broadcastPartnerInto(x.shape)) : x;
      maskShape = m.shape;
      std::string zero = m.kind == Kind::I64 ? std::to_string(rng_.range(0, 3)) : num(static_cast<double>(rng_.range(-4, 4)) / 4);
      return comparison() + "(" + m.name + ", " + zero + ")";
    }
    maskShape = x.shape;  // y broadcasts into x
    return comparison() + "(" + y->name + ", " + x.name + ")";
  }
  // A shape broadcasting to `s` (dims kept or set to 1, leading dims dropped).
  Shape broadcastPartnerInto(const Shape& s) {
    Shape out;
    size_t drop = rng_.chance(0.3) && !s.empty() ? static_cast<size_t>(rng_.below(static_cast<int64_t>(s.size()) + 1)) : 0;
    for (size_t i = drop; i < s.size(); ++i) out.push_back(rng_.chance(0.3) ? 1 : s[i]);
    return out;
  }

  bool selectOp() {
    const Val* x = pick(isF);
    if (!x) return false;
    Val a = *x;
    Shape ms;
    std::string m = mask(a, ms);
    if (rng_.chance(0.5)) {
      static const std::vector<std::string> values = {"-1.5", "0.0", "2.0", "-100.0"};
      return emit("masked_fill(" + a.name + ", " + m + ", " + rng_.pick(values) + ")", Kind::F32, a.shape, std::max(a.mag, 100.0), a.exact);
    }
    Shape bs;
    double bm = 0;
    bool be = true;
    std::string b = partner(a, Kind::F32, bs, bm, be);
    Shape out = broadcast(broadcast(ms, a.shape), bs);
    bool flip = rng_.chance(0.5);
    return emit("where(" + m + ", " + (flip ? b : a.name) + ", " + (flip ? a.name : b) + ")", Kind::F32, out, std::max(a.mag, bm),
                a.exact && be);
  }

  bool integerOp() {
    const Val* x = pick([](const Val& v) { return v.kind == Kind::I64; });
    if (!x) x = &newInput(Kind::I64, drawShape());
    Val a = *x;
    switch (rng_.below(6)) {
      case 0: {
        Shape bs;
        double bm = 0;
        bool be = true;
        std::string b = partner(a, Kind::I64, bs, bm, be);
        struct IntegerBinary {
          std::string op;
          double (*mag)(double, double);  // a bound of |op(a, b)| for |a| <= ma, |b| <= mb
        };
        static const std::vector<IntegerBinary> ops = {{"add", [](double ma, double mb) { return ma + mb; }},
                                                       {"sub", [](double ma, double mb) { return ma + mb; }},
                                                       {"mul", [](double ma, double mb) { return ma * mb; }},
                                                       {"maximum", [](double ma, double mb) { return ma + mb; }},
                                                       {"minimum", [](double ma, double mb) { return ma + mb; }}};
        const IntegerBinary& op = rng_.pick(ops);
        return emit(op.op + "(" + a.name + ", " + b + ")", Kind::I64, broadcast(a.shape, bs), op.mag(a.mag, bm), true);
      }
      case 1: {
        static const std::vector<std::string> ops = {"neg", "abs", "relu"};
        if (a.mag < 1000 && rng_.chance(0.3)) return emit("pow(" + a.name + ", 2)", Kind::I64, a.shape, a.mag * a.mag, true);
        return emit(rng_.pick(ops) + "(" + a.name + ")", Kind::I64, a.shape, a.mag, true);
      }
      case 2: {
        if (a.shape.empty()) return false;
        static const std::vector<std::string> ops = {"sum", "amax", "amin"};
        std::string op = rng_.pick(ops);
        int64_t axis = rng_.below(static_cast<int64_t>(a.shape.size()));
        bool keep = rng_.chance(0.4);
        Shape out = a.shape;
        if (keep) out[static_cast<size_t>(axis)] = 1;
        else out.erase(out.begin() + axis);
        return emit(op + "(" + a.name + ", [" + axisText(axis, a.shape.size()) + "]" + (keep ? ", keepdim=true" : "") + ")", Kind::I64, out,
                    reducedMagnitude(op, a.mag, a.shape[static_cast<size_t>(axis)]), true);
      }
      case 3: return emit("to(" + a.name + ", dtype=\"f32\")", Kind::F32, a.shape, a.mag, true);
      case 4: {  // indices into an embedding table
        if (!a.knownRange || a.lo < 0) return false;
        int64_t rows = a.hi + 1 + rng_.below(3), dim = drawSize();
        enterParamScope();
        std::string w = newParam({rows, dim}, 1.0).name;
        Shape out = a.shape;
        out.push_back(dim);
        bool ok = emit("embedding(" + a.name + ", " + w + ")", Kind::F32, out, 5, true);
        leaveScope();
        return ok;
      }
      default: {
        Shape ms;
        std::string m = mask(a, ms);
        return emit("to(" + m + ", dtype=\"f32\")", Kind::F32, ms, 1, true);
      }
    }
  }

  bool catOrLoss() {
    const Val* x = pick([](const Val& v) { return isF(v) && !v.shape.empty() && !v.isParam; });
    if (!x) return false;
    Val a = *x;
    switch (rng_.below(3)) {
      case 0: {
        size_t d = static_cast<size_t>(rng_.below(static_cast<int64_t>(a.shape.size())));
        const Val* b = pick([&](const Val& v) {
          if (v.kind != Kind::F32 || v.shape.size() != a.shape.size()) return false;
          for (size_t i = 0; i < v.shape.size(); ++i)
            if (i != d && v.shape[i] != a.shape[i]) return false;
          return true;
        });
        Shape out = a.shape;
        out[d] += b->shape[d];
        return emit("cat(" + a.name + ", " + b->name + ", dim=" + axisText(static_cast<int64_t>(d), a.shape.size()) + ")", Kind::F32, out,
                    std::max(a.mag, b->mag), a.exact && b->exact);
      }
      case 1: {
        const Val* b = pick([&](const Val& v) { return isF(v) && v.shape == a.shape && v.name != a.name; });
        std::string bn = b ? b->name : newInput(Kind::F32, a.shape).name;
        return emit("mse_loss(" + a.name + ", " + bn + ")", Kind::F32, {}, 100, false);
      }
      default: {
        if (a.shape.size() != 2) return false;
        ProgramInput* dummy = nullptr;
        (void)dummy;
        Val t;
        t.name = "x" + std::to_string(inputs_++);
        t.kind = Kind::I64;
        t.shape = {a.shape[0]};
        t.lo = 0, t.hi = a.shape[1] - 1, t.knownRange = true, t.mag = static_cast<double>(a.shape[1]);
        prog_.inputs.push_back({t.name, typeText(Kind::I64, t.shape), "range(0, " + std::to_string(a.shape[1]) + ")"});
        vals_.push_back(t);
        std::string logits = a.mag > 50 ? "tanh(" + a.name + ")" : a.name;
        return emit("cross_entropy(" + logits + ", " + t.name + ")", Kind::F32, {}, 10, false);
      }
    }
  }

  bool poolOrConv() {
    const Val* x = pick([](const Val& v) { return isF(v) && v.shape.size() == 4 && v.shape[2] >= 2 && v.shape[3] >= 2 && !v.isParam; });
    if (!x) return false;
    Val a = *x;
    int64_t h = a.shape[2], w = a.shape[3];
    switch (rng_.below(4)) {
      case 0: case 1: {
        bool maxPool = rng_.chance(0.5);
        int64_t k = 2, s = rng_.chance(0.5) ? 2 : 1;
        Shape out = {a.shape[0], a.shape[1], (h - k) / s + 1, (w - k) / s + 1};
        return emit(std::string(maxPool ? "max_pool2d(" : "avg_pool2d(") + a.name + ", [2], stride=[" + std::to_string(s) + "])", Kind::F32,
                    out, a.mag, maxPool && a.exact);
      }
      case 2: return emit("adaptive_avg_pool2d(" + a.name + ", [1])", Kind::F32, {a.shape[0], a.shape[1], 1, 1}, a.mag, false);
      default: {
        int64_t c = a.shape[1], o = rng_.range(1, 5), k = rng_.chance(0.5) ? 1 : 2, pad = rng_.chance(0.3) ? 1 : 0;
        if (k == 2 && h >= 3 && w >= 3 && rng_.chance(0.5)) k = 3;  // 3x3: the Winograd path where it pays
        enterParamScope();
        std::string wn = newParam({o, c, k, k}, 1.0 / std::sqrt(static_cast<double>(c * k * k))).name;
        std::string bn = rng_.chance(0.5) ? ", " + newParam({o}, 0.1).name : "";
        Shape out = {a.shape[0], o, h + 2 * pad - k + 1, w + 2 * pad - k + 1};
        std::string in = a.mag > 20 ? "tanh(" + a.name + ")" : a.name;
        bool ok = emit("conv2d(" + in + ", " + wn + bn + ", padding=[" + std::to_string(pad) + "])", Kind::F32, out, 25, false);
        leaveScope();
        return ok;
      }
    }
  }

  // ----- outputs -----
  void finish() {
    // The results: the values nothing else reads (a dead value would be pruned by the tracer and
    // its op never compiled), newest first, at most 5; the newest value always.
    std::set<std::string> read;
    static const std::regex valueName(R"(\bv[0-9]+\b)");
    for (const ProgramStmt& st : prog_.stmts) {
      std::string rhs = st.text.substr(st.text.find('=') + 1);
      for (auto m = std::sregex_iterator(rhs.begin(), rhs.end(), valueName); m != std::sregex_iterator(); ++m) read.insert(m->str());
    }
    std::vector<const Val*> outs;
    for (auto v = vals_.rbegin(); v != vals_.rend() && outs.size() < 5; ++v)
      if (!v->isParam && v->name[0] == 'v' && (outs.empty() || !read.count(v->name))) outs.push_back(&*v);
    if (outs.empty())
      for (const Val& v : vals_)
        if (!v.isParam) outs = {&v};
    if (!o_.training) {
      for (const Val* v : outs) prog_.outputs.push_back(v->name);
      return;
    }
    // One scalar loss over the floating-point results (gradients need an f32 path). Each result
    // is weighted by a seeded random tensor: a plain sum can be 0 in exact arithmetic (the sum
    // of a layer_norm, and its gradient), and rounding noise around 0 has no relative tolerance.
    std::vector<Val> terms;
    for (const Val* v : outs)
      if (v->kind == Kind::F32) terms.push_back(*v);  // copies: newParam grows vals_
    if (terms.empty())  // no f32 result: the last f32 value made
      for (auto v = vals_.rbegin(); v != vals_.rend() && terms.empty(); ++v)
        if (isF(*v) && !v->isParam) terms.push_back(*v);
    std::string loss;
    for (const Val& v : terms) {
      std::string weight = newParam(v.shape, 1.0).name;
      std::string term = (rng_.chance(0.5) ? "sum(" : "mean(") + (v.mag > 1e4 ? "tanh(" + v.name + ")" : v.name) + " * " + weight + ")";
      loss += (loss.empty() ? "" : " + ") + term;
    }
    prog_.outputs.push_back(loss);
  }

  Rng rng_;
  GeneratorOptions o_;
  FuzzProgram prog_;
  std::vector<Val> vals_;
  std::string scope_, lastScope_;
  int inputs_ = 0, params_ = 0, values_ = 0, scopes_ = 0;
};

}  // namespace

FuzzProgram generateFuzzProgram(uint64_t seed, const GeneratorOptions& options) { return ProgramGenerator(seed, options).run(); }

std::string generateProgram(uint64_t seed, const GeneratorOptions& options) { return printProgram(generateFuzzProgram(seed, options)); }

}  // namespace fusebox::fuzz

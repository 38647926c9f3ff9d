// ONNX's Einsum as registry ops: each operand's repeated labels become a diagonal (a strided
// slice of the flattened pair), labels no later operand or the output needs are summed out
// early, and operands contract left to right as one batched matmul each ([batch, M, K] x
// [batch, K, N], the labels sorted into batch, kept and contracted), then the result is summed
// and permuted into the output's order. Ellipses broadcast as NumPy's do.

#include <algorithm>
#include <cctype>
#include <map>

#include "core/frontend/onnx/onnx_ops.h"
#include "core/ir/error.h"

namespace fusebox {

namespace {

using Ints = std::vector<int64_t>;
using Labels = std::vector<int>;  // a letter's char code, or kEllipsis + i for the i-th broadcast dim

constexpr int kEllipsis = 1000;
constexpr size_t kMaxOperands = 16;

// An operand (or the result so far): its value and one label per dim.
struct Term {
  ValueId v;
  Labels labels;
};

struct Equation {
  std::vector<std::string> inputs;  // each operand's labels, "..." kept
  std::string output;
  bool explicitOutput = false;
};

Equation parse(const std::string& text) {
  Equation e;
  std::string s;
  for (char ch : text)
    if (ch != ' ') s += ch;
  size_t arrow = s.find("->");
  std::string lhs = arrow == std::string::npos ? s : s.substr(0, arrow);
  if (arrow != std::string::npos) {
    e.output = s.substr(arrow + 2);
    e.explicitOutput = true;
  }
  size_t start = 0;
  for (;;) {
    size_t comma = lhs.find(',', start);
    e.inputs.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return e;
}

// The labels of one term: letters, and the ellipsis as `ellipsisDims` broadcast labels aligned
// to the right of `maxEllipsis`.
Labels labelsOf(const std::string& term, size_t rank, size_t* ellipsisDims, size_t maxEllipsis) {
  Labels l;
  size_t letters = 0;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.compare(i, 3, "...") == 0) {
      if (ellipsis) throw Error("an Einsum term may have one ellipsis");
      ellipsis = true;
      i += 2;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(term[i]))) throw Error("Einsum labels must be letters, got '" + term.substr(i, 1) + "'");
    ++letters;
  }
  if (letters > rank || (!ellipsis && letters != rank))
    throw Error("Einsum term '" + term + "' has " + std::to_string(letters) + " labels for a rank-" + std::to_string(rank) + " operand");
  size_t e = rank - letters;
  if (ellipsisDims) *ellipsisDims = e;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.compare(i, 3, "...") == 0) {
      for (size_t k = 0; k < e; ++k) l.push_back(kEllipsis + static_cast<int>(maxEllipsis - e + k));
      i += 2;
    } else {
      l.push_back(static_cast<unsigned char>(term[i]));
    }
  }
  return l;
}

int64_t count(const Labels& l, int x) { return std::count(l.begin(), l.end(), x); }
bool has(const Labels& l, int x) { return count(l, x) > 0; }

ValueId permuted(OnnxNode& c, ValueId v, const Ints& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return c.emit("permute", {v}, {{"dims", perm}});
  return v;
}

// Term t with its dims reordered to `order` (a permutation of its labels).
Term reorder(OnnxNode& c, const Term& t, const Labels& order) {
  Ints perm;
  for (int x : order) perm.push_back(std::find(t.labels.begin(), t.labels.end(), x) - t.labels.begin());
  return {permuted(c, t.v, perm), order};
}

// The diagonal of a label repeated in one operand: the two dims moved last, flattened, and every
// (n + 1)-th element taken.
Term diagonals(OnnxNode& c, Term t) {
  for (size_t i = 0; i < t.labels.size(); ++i) {
    for (size_t j = i + 1; j < t.labels.size(); ++j) {
      if (t.labels[i] != t.labels[j]) continue;
      Labels order;
      for (size_t k = 0; k < t.labels.size(); ++k)
        if (k != i && k != j) order.push_back(t.labels[k]);
      Ints perm;
      for (size_t k = 0; k < t.labels.size(); ++k)
        if (k != i && k != j) perm.push_back(static_cast<int64_t>(k));
      perm.push_back(static_cast<int64_t>(i));
      perm.push_back(static_cast<int64_t>(j));
      ValueId p = permuted(c, t.v, perm);
      Ints s = c.sizes(p);
      int64_t n = s.back();
      if (s[s.size() - 2] != n) throw Error("a repeated Einsum label must index dims of one size");
      Ints flat(s.begin(), s.end() - 2);
      flat.push_back(n * n);
      ValueId d = c.emit("slice", {c.reshape(p, flat)}, {{"dim", static_cast<int64_t>(flat.size() - 1)}, {"start", int64_t{0}},
                                                          {"end", n * n}, {"step", n + 1}});
      order.push_back(t.labels[i]);
      return diagonals(c, {d, order});
    }
  }
  return t;
}

// Sums out the labels of t that `keep` does not list.
Term sumOut(OnnxNode& c, Term t, const Labels& keep) {
  Ints axes;
  Labels rest;
  for (size_t i = 0; i < t.labels.size(); ++i) {
    if (has(keep, t.labels[i])) rest.push_back(t.labels[i]);
    else axes.push_back(static_cast<int64_t>(i));
  }
  if (axes.empty()) return t;
  return {c.emit("sum", {t.v}, {{"dim", axes}, {"keepdim", false}}), rest};
}

// Broadcasts t's size-1 dims to the label sizes.
Term broadcast(OnnxNode& c, Term t, const std::map<int, int64_t>& size) {
  Ints s = c.sizes(t.v), full;
  for (int x : t.labels) full.push_back(size.at(x));
  if (s == full) return t;
  return {c.emit("expand", {t.v}, {{"shape", shapeOf(full)}}), t.labels};
}

int64_t product(OnnxNode& c, const Term& t, const Labels& of) {
  Ints s = c.sizes(t.v);
  int64_t p = 1;
  for (int x : of) p *= s[static_cast<size_t>(std::find(t.labels.begin(), t.labels.end(), x) - t.labels.begin())];
  return p;
}

Ints sizesOf(OnnxNode& c, const Term& t, const Labels& of) {
  Ints s = c.sizes(t.v), out;
  for (int x : of) out.push_back(s[static_cast<size_t>(std::find(t.labels.begin(), t.labels.end(), x) - t.labels.begin())]);
  return out;
}

// a x b over their shared labels: those needed later stay as batch dims, the rest contract.
Term contract(OnnxNode& c, const Term& a, const Term& b, const Labels& later) {
  Labels batch, contracted, aOnly, bOnly;
  for (int x : a.labels) {
    if (has(b.labels, x)) (has(later, x) ? batch : contracted).push_back(x);
    else aOnly.push_back(x);
  }
  for (int x : b.labels)
    if (!has(a.labels, x)) bOnly.push_back(x);
  Labels aOrder = batch, bOrder = batch;
  aOrder.insert(aOrder.end(), aOnly.begin(), aOnly.end());
  aOrder.insert(aOrder.end(), contracted.begin(), contracted.end());
  bOrder.insert(bOrder.end(), contracted.begin(), contracted.end());
  bOrder.insert(bOrder.end(), bOnly.begin(), bOnly.end());
  Term ar = reorder(c, a, aOrder), br = reorder(c, b, bOrder);
  int64_t nb = product(c, ar, batch), m = product(c, ar, aOnly), k = product(c, ar, contracted), n = product(c, br, bOnly);
  ValueId mm = c.emit("matmul", {c.reshape(ar.v, {nb, m, k}), c.reshape(br.v, {nb, k, n})});
  Ints out = sizesOf(c, ar, batch), am = sizesOf(c, ar, aOnly), bn = sizesOf(c, br, bOnly);
  out.insert(out.end(), am.begin(), am.end());
  out.insert(out.end(), bn.begin(), bn.end());
  Labels labels = batch;
  labels.insert(labels.end(), aOnly.begin(), aOnly.end());
  labels.insert(labels.end(), bOnly.begin(), bOnly.end());
  return {c.reshape(mm, out), labels};
}

OnnxOutputs einsum(OnnxNode& c) {
  Equation eq = parse(c.attrString("equation", ""));
  size_t n = static_cast<size_t>(std::ssize(c.n.inputs));
  if (eq.inputs.size() != n) throw Error("the equation has " + std::to_string(eq.inputs.size()) + " terms for " + std::to_string(n) + " inputs");
  if (n == 0 || n > kMaxOperands) throw OnnxUnsupported("Einsum of " + std::to_string(n) + " operands is not supported");
  // The ellipsis' broadcast rank: the most dims any operand's ellipsis covers.
  size_t maxEllipsis = 0;
  for (size_t i = 0; i < n; ++i) {
    size_t e = 0;
    labelsOf(eq.inputs[i], c.rank(c.in(static_cast<int>(i))), &e, 0);
    maxEllipsis = std::max(maxEllipsis, e);
  }
  std::vector<Term> terms;
  std::map<int, int64_t> size;
  for (size_t i = 0; i < n; ++i) {
    ValueId v = c.in(static_cast<int>(i));
    Term t{v, labelsOf(eq.inputs[i], c.rank(v), nullptr, maxEllipsis)};
    Ints s = c.sizes(v);
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t& known = size.try_emplace(t.labels[d], s[d]).first->second;
      if (known == 1) known = s[d];
      else if (s[d] != 1 && s[d] != known) throw Error("Einsum label '" + std::string(1, static_cast<char>(t.labels[d] < kEllipsis ? t.labels[d] : '.')) + "' has sizes " + std::to_string(known) + " and " + std::to_string(s[d]));
    }
    terms.push_back(t);
  }
  Labels all;
  for (const Term& t : terms) all.insert(all.end(), t.labels.begin(), t.labels.end());
  Labels output;
  if (eq.explicitOutput) {
    output = labelsOf(eq.output, eq.output.find("...") == std::string::npos ? eq.output.size() : eq.output.size() - 3 + maxEllipsis, nullptr,
                      maxEllipsis);
    for (int x : output)
      if (!has(all, x) || count(output, x) > 1) throw Error("the Einsum output '" + eq.output + "' names a label no input has, or one twice");
  } else {  // the broadcast dims, then the letters used once, alphabetically
    for (size_t k = 0; k < maxEllipsis; ++k) output.push_back(kEllipsis + static_cast<int>(k));
    Labels once;
    for (int x : all)
      if (x < kEllipsis && count(all, x) == 1) once.push_back(x);
    std::sort(once.begin(), once.end());
    output.insert(output.end(), once.begin(), once.end());
  }
  // Left to right: each operand's diagonals, early sums, then one contraction.
  Term acc{kNoId, {}};
  for (size_t i = 0; i < n; ++i) {
    Labels later = output;
    for (size_t j = i + 1; j < n; ++j) later.insert(later.end(), terms[j].labels.begin(), terms[j].labels.end());
    Term t = broadcast(c, diagonals(c, terms[i]), size);
    if (acc.v == kNoId) {
      acc = sumOut(c, t, later);
      continue;
    }
    Labels keepA = later, keepB = later;  // a label only one side has and nobody needs sums out first
    keepA.insert(keepA.end(), t.labels.begin(), t.labels.end());
    keepB.insert(keepB.end(), acc.labels.begin(), acc.labels.end());
    acc = contract(c, sumOut(c, acc, keepA), sumOut(c, t, keepB), later);
  }
  acc = sumOut(c, acc, output);
  return {reorder(c, acc, output).v};
}

}  // namespace

void addEinsumImporters(OnnxImporters& m) { m["Einsum"] = einsum; }

}  // namespace fusebox

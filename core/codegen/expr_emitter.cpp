#include "core/codegen/expr_emitter.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "core/ir/error.h"
#include "core/ops/binary_math.h"

namespace fusebox {

std::string ctype(DType t) {
  switch (t) {
    case DType::F32:
    case DType::F16:
    case DType::BF16:
      return "float";
    case DType::F64:
      return "double";
    case DType::I64:
      return "fb_i64";
    case DType::I32:
      return "int";
    case DType::Bool:
      return "bool";
    default:
      throw Error(std::string("the CPU backend does not support ") + std::string(dtypeName(t)) + " yet");
  }
}

std::string storageCType(DType t) {
  if (t == DType::F16) return "fb_f16";
  if (t == DType::BF16) return "fb_bf16";
  return ctype(t);
}

namespace {

// A float value `v` of type t: rounded to f16/bf16, as is for every other type.
std::string roundedTo(DType t, const std::string& v) {
  if (t == DType::F16) return "fb_round_f16(" + v + ")";
  if (t == DType::BF16) return "fb_round_bf16(" + v + ")";
  return v;
}

// `v` converted to t.
std::string castTo(DType t, const std::string& v) {
  if (t == DType::Bool) return "(" + v + " != 0)";
  return roundedTo(t, "((" + ctype(t) + ")" + v + ")");
}

}  // namespace

std::string literal(double v, DType t) {
  if (t == DType::Bool) return v != 0 ? "true" : "false";
  if (isInteger(t)) {
    // Saturated (a max reduction's identity is -inf); i64 as a cast to fb_i64, whose underlying
    // type differs between the preludes (long, long long), so overloads and templates deduce it;
    // the minimum written as `max - 1` negated (-9223372036854775808 is not a literal).
    bool i64 = t == DType::I64;
    const double lo = i64 ? -9223372036854775808.0 : -2147483648.0, hi = i64 ? 9223372036854775807.0 : 2147483647.0;
    std::string digits = std::isnan(v) ? "0"
                         : v <= lo     ? std::string(i64 ? "-9223372036854775807" : "-2147483647") + " - 1"
                         : v >= hi     ? std::string(i64 ? "9223372036854775807" : "2147483647")
                                       : std::to_string(static_cast<int64_t>(v));
    if (i64) return "((fb_i64)" + digits + ")";
    return digits.find(' ') != std::string::npos ? "(" + digits + ")" : digits;
  }
  bool single = t != DType::F64;  // f16/bf16 compute in float
  std::string suffix = single ? "f" : "";
  if (std::isinf(v)) return std::string(v < 0 ? "-" : "") + (single ? "__builtin_inff()" : "__builtin_inf()");
  if (std::isnan(v)) return single ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")";
  if (t == DType::F16 || t == DType::BF16) v = roundToDType(v, t);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s + suffix;
}

namespace {

// A copy of `e` whose loads name buffers by their C identifiers.
LExprPtr withCNames(const LExprPtr& e, const BufferNames& ids) {
  auto copy = std::make_shared<LExpr>(*e);
  if (e->kind == LExpr::Kind::Load || e->kind == LExpr::Kind::LoadIndirect) copy->buffer = ids(e->buffer);
  for (LExprPtr& a : copy->args) a = withCNames(a, ids);
  return copy;
}

bool checksIndices(const LExprPtr& e) {
  if (e->kind == LExpr::Kind::LoadIndirect) return true;
  return std::any_of(e->args.begin(), e->args.end(), checksIndices);
}

}  // namespace

std::string KernelEmitter::emit(const LoopNode& n, const LExprPtr& e, const std::map<std::string, IndexExpr>& vars,
                                const std::string& indent) {
  site_ = n.id;
  return emitExpr(withCNames(e, ids_), vars, indent);
}

bool alwaysInBounds(const IndexExpr& e, int64_t elements, int64_t width) {
  auto [lo, hi] = e.bounds();
  return lo >= 0 && hi <= elements - width;
}

bool KernelEmitter::mayReadOutOfBounds(const LExprPtr& e, const std::map<std::string, IndexExpr>& vars) const {
  if (e->kind == LExpr::Kind::Load) {
    auto it = ids_.elements.find(e->buffer);
    if (it == ids_.elements.end() || !alwaysInBounds(e->index.substitute(vars), it->second)) return true;
  }
  return std::any_of(e->args.begin(), e->args.end(), [&](const LExprPtr& a) { return mayReadOutOfBounds(a, vars); });
}

std::string KernelEmitter::emitGuardedWhere(const LExprPtr& e, const std::map<std::string, IndexExpr>& vars,
                                            const std::string& indent) {
  std::string cond = emitExpr(e->args[0], vars, indent);
  std::string name = "t" + std::to_string(temp_++);
  os_ << indent << ctype(e->dtype) << " " << name << ";\n";
  for (int branch : {1, 2}) {
    os_ << indent << (branch == 1 ? "if (" + cond + ") {\n" : std::string("} else {\n"));
    auto saved = cse_;  // temporaries of a branch are not visible after it
    std::string v = emitExpr(e->args[branch], vars, indent + "  ");
    os_ << indent << "  " << name << " = " << v << ";\n";
    cse_ = std::move(saved);
  }
  os_ << indent << "}\n";
  return name;
}

std::string KernelEmitter::emitExpr(const LExprPtr& e, const std::map<std::string, IndexExpr>& vars,
                                    const std::string& indent) {
  if (e->kind == LExpr::Kind::Where && (mayReadOutOfBounds(e->args[1], vars) || mayReadOutOfBounds(e->args[2], vars)))
    return emitGuardedWhere(e, vars, indent);
  std::vector<std::string> kids;
  kids.reserve(e->args.size());
  for (const LExprPtr& a : e->args) kids.push_back(emitExpr(a, vars, indent));
  const std::string& what = e->kind == LExpr::Kind::Unary    ? unaryMath(e->unaryOp).name
                            : e->kind == LExpr::Kind::Binary ? binaryMath(e->binaryOp).name
                                                             : e->buffer;
  std::string key = std::to_string(static_cast<int>(e->kind)) + what + std::string(dtypeName(e->dtype));
  if (e->kind == LExpr::Kind::Constant) key += std::to_string(e->value);
  if (e->kind == LExpr::Kind::Load || e->kind == LExpr::Kind::LoadIndirect || e->kind == LExpr::Kind::Index ||
      e->kind == LExpr::Kind::Random)
    key += "[" + e->index.substitute(vars).str() + "]" + std::to_string(e->seed) + "," + std::to_string(e->stride);
  for (const std::string& k : kids) key += "|" + k;
  if (auto it = cse_.find(key); it != cse_.end()) return it->second;
  std::string val = compute(e, kids, vars);
  if (e->kind == LExpr::Kind::Constant || e->kind == LExpr::Kind::Index) return val;
  std::string name = "t" + std::to_string(temp_++);
  os_ << indent << "const " << ctype(e->dtype) << " " << name << " = " << val << ";\n";
  cse_[key] = name;
  return name;
}

void KernelEmitter::publish(const std::string& buffer, const std::string& name, bool perElement) {
  published_[buffer] = name;
  if (perElement) perElement_.insert(buffer);
}
void KernelEmitter::publishAccumulator(const std::string& buffer, const std::string& acc) {
  auto it = ids_.dtypes.find(buffer);
  publish(buffer, it == ids_.dtypes.end() ? acc : roundedTo(it->second, acc), false);
}
void KernelEmitter::forgetPerElement() {
  for (const std::string& b : perElement_) published_.erase(b);
  perElement_.clear();
}

std::string KernelEmitter::compute(const LExprPtr& e, const std::vector<std::string>& kids,
                                   const std::map<std::string, IndexExpr>& vars) {
  auto arg = [&](size_t i) { return kids.at(i); };
  switch (e->kind) {
    case LExpr::Kind::Load: {
      if (auto it = published_.find(e->buffer); it != published_.end()) return it->second;
      std::string text = e->buffer + "[" + e->index.substitute(vars).str() + "]";
      if (auto it = aliases_.find(text); it != aliases_.end()) return it->second;
      return text;
    }
    case LExpr::Kind::LoadIndirect:  // an index outside [0, extent) is reported and read as 0
      return e->buffer + "[" + e->index.substitute(vars).str() + " + " + std::to_string(e->stride) + " * fb_check_index((fb_i64)(" +
             arg(0) + "), " + std::to_string(e->extent) + ", " + std::to_string(site_) + ")]";
    case LExpr::Kind::Constant:
      return literal(e->value, e->dtype);
    case LExpr::Kind::Index:
      return castTo(e->dtype, "(" + e->index.substitute(vars).str() + ")");
    case LExpr::Kind::Random:
      return castTo(e->dtype, "fb_rand(" + std::to_string(e->seed) + "UL, (fb_u64)(" + e->index.substitute(vars).str() + "))");
    case LExpr::Kind::Cast:
      return castTo(e->dtype, arg(0));
    case LExpr::Kind::Where:
      return arg(0) + " ? " + arg(1) + " : " + arg(2);
    case LExpr::Kind::Unary:
      return roundedTo(e->dtype, unaryMathExpr(unaryMath(e->unaryOp), arg(0), literal(1, e->dtype)));
    case LExpr::Kind::Binary: {
      std::string a = arg(0), b = arg(1);  // in this order: each may declare numbered temporaries
      return roundedTo(e->dtype, binaryMathExpr(binaryMath(e->binaryOp), a, b));
    }
  }
  return "0";
}

IndexExpr storeIndexOf(const LoopNode& n) {
  std::vector<IndexExpr> idx;
  std::vector<int64_t> sizes;
  for (const LoopVar& v : n.vars) idx.push_back(IndexExpr::var(v.name, v.size)), sizes.push_back(v.size);
  return linearIndex(idx, Layout::contiguous(sizes).strides);
}

// Coefficient of a plain variable term in an index (0 when absent).
int64_t coefficientOf(const IndexExpr& e, const std::string& var) {
  for (const IndexTerm& t : e.terms())
    if (t.atoms.size() == 1 && t.atoms[0].kind == IndexAtom::Kind::Var && t.atoms[0].name == var) return t.coeff;
  return 0;
}

std::string reduceInit(const LoopNode& n, DType t) { return literal(reductionMath(n.reduceOp).identity, t); }

std::string reduceCombine(const LoopNode& n, const std::string& acc, const std::string& v) {
  const ReductionMath& r = reductionMath(n.reduceOp);
  if (!r.helper) return acc + " += " + v;
  return acc + " = " + r.helper + "(" + acc + ", " + v + ")";
}

bool prefersColumnLoop(const LoopProgram& p, const Kernel& k, int64_t M, int64_t K) {
  if (k.segments.size() != 1 || K <= 1) return false;
  bool contiguousInM = false;
  for (const KernelItem& it : k.items) {
    if (it.row) return false;
    const LoopNode& n = p.nodes[it.node];
    std::vector<std::pair<std::string, IndexExpr>> loads;
    n.body->collectLoads(loads);
    auto vars = kernelVarMap(n, false, M, K);
    for (auto& [b, ix] : loads) {
      IndexExpr e = ix.substitute(vars);
      auto v = e.variables();
      bool usesM = std::find(v.begin(), v.end(), "m") != v.end();
      if (coefficientOf(e, "k") == 1 && usesM) return false;  // row-contiguous data: keep rows
      if (coefficientOf(e, "m") == 1 && coefficientOf(e, "k") >= 16) contiguousInM = true;
    }
  }
  return contiguousInM;
}

namespace {

// Whether `e` is free of k inside a division or modulo (k appears in plain terms only).
bool affineInK(const IndexExpr& e) {
  for (const IndexTerm& t : e.terms())
    for (const IndexAtom& a : t.atoms)
      if (a.kind != IndexAtom::Kind::Var) {
        std::vector<std::string> v = a.arg->variables();
        if (std::find(v.begin(), v.end(), "k") != v.end()) return false;
      }
  return true;
}

}  // namespace

int64_t pointwiseInnerExtent(const LoopProgram& p, const Kernel& k, int64_t cap) {
  const LoopNode& first = p.nodes[k.items[0].node];
  if (first.vars.empty()) return 1;
  int64_t innermost = first.vars.back().size;
  std::vector<int64_t> suffixes;  // widest first, the innermost dim alone excluded
  int64_t prod = innermost;
  for (size_t i = first.vars.size() - 1; i-- > 0;) {
    int64_t size = first.vars[i].size;
    if (size <= 0 || prod > cap / size) break;  // checked before multiplying: no overflow
    prod *= size;
    suffixes.insert(suffixes.begin(), prod);
  }
  for (int64_t K : suffixes) {
    if (K <= innermost || k.M % K != 0) continue;
    bool affine = true;
    for (const KernelItem& it : k.items) {
      const LoopNode& n = p.nodes[it.node];
      auto vars = kernelVarMap(n, false, k.M / K, K);
      std::vector<std::pair<std::string, IndexExpr>> loads;
      n.body->collectLoads(loads);
      loads.push_back({n.output, storeIndexOf(n)});
      for (auto& [b, ix] : loads) affine = affine && affineInK(ix.substitute(vars));
      if (!affine) break;
    }
    if (affine) return K;
  }
  return innermost > 1 && k.M % innermost == 0 ? innermost : 1;
}

std::map<int, std::string> indexCheckSites(const LoopProgram& p, const std::function<std::string(NodeId)>& describeTraced) {
  std::map<int, std::string> sites;
  for (const LoopNode& n : p.nodes)
    if ((n.kind == LoopNode::Kind::Extern && externPrim(n.externOp).integerInput >= 0) || (n.body && checksIndices(n.body)))
      sites[n.id] = describeLoopNode(n, describeTraced);
  return sites;
}

std::string describeLoopNode(const LoopNode& n, const std::function<std::string(NodeId)>& describeTraced) {
  std::string s = "n" + std::to_string(n.id) + " " + n.output;
  if (!n.scope.empty()) s += " [" + n.scope + "]";
  if (describeTraced) {
    std::string from;
    for (NodeId t : n.provenance) from += (from.empty() ? "" : ", ") + describeTraced(t);
    if (!from.empty()) s += " from " + from;
  }
  return s;
}

void emitLoopItem(std::ostringstream& body, KernelEmitter& em, const LoopNode& n, const std::map<std::string, IndexExpr>& vars,
                  const std::string& indent, bool stored, const std::string& acc, bool reassociableSums) {
  std::string v = em.emit(n, n.body, vars, indent);
  if (n.kind == LoopNode::Kind::Reduction) {
    if (reassociableSums && n.reduceOp == ReduceOp::Sum) body << indent << "{ " << kReassociatePragma << " " << reduceCombine(n, acc, v) << "; }\n";
    else body << indent << reduceCombine(n, acc, v) << ";\n";
    return;
  }
  const std::string& out = em.ids()(n.output);
  if (stored) body << indent << out << "[" << storeIndexOf(n).substitute(vars).str() << "] = " << v << ";\n";
  em.publish(out, v, true);
}

std::string bufferPointerDecls(const LoopProgram& p, const Kernel& k, const std::map<std::string, int>& slot,
                               const std::string& restrictWord, const BufferNames& ids) {
  std::set<std::string> used(k.readBuffers.begin(), k.readBuffers.end());
  used.insert(k.storedBuffers.begin(), k.storedBuffers.end());
  std::set<std::string> written(k.storedBuffers.begin(), k.storedBuffers.end());
  std::string s;
  for (const std::string& b : used) {
    std::string t = storageCType(p.buffer(b).dtype), c = written.count(b) ? "" : "const ";
    s += "  " + c + t + "* " + restrictWord + " " + ids(b) + " = (" + c + t + "*)bufs[" + std::to_string(slot.at(b)) + "];\n";
  }
  return s;
}

namespace {
std::vector<std::string> bufferNamesOf(const LoopProgram& p) {
  std::vector<std::string> names;
  for (const Buffer& b : p.buffers) names.push_back(b.name);
  return names;
}
}  // namespace

BufferNames::BufferNames(const LoopProgram& p) : ids(bufferNamesOf(p), "b_") {
  for (const Buffer& b : p.buffers) elements[ids(b.name)] = b.layout.numel(), dtypes[ids(b.name)] = b.dtype;
}

}  // namespace fusebox

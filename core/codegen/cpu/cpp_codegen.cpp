#include "core/codegen/cpu/cpp_codegen.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "core/codegen/cpu/cpu_prelude.h"
#include "core/ir/error.h"
#include "core/ops/op_schema.h"

namespace fusebox {

namespace {

std::string ctype(DType t) {
  switch (t) {
    case DType::F32: return "float";
    case DType::F64: return "double";
    case DType::I64: return "fb_i64";
    case DType::I32: return "int";
    case DType::Bool: return "bool";
    default: throw Error(std::string("the CPU backend does not support ") + std::string(dtypeName(t)) + " yet");
  }
}

std::string literal(double v, DType t) {
  if (t == DType::Bool) return v != 0 ? "true" : "false";
  if (isInteger(t)) return std::to_string(static_cast<int64_t>(v)) + (t == DType::I64 ? "L" : "");
  std::string suffix = t == DType::F32 ? "f" : "";
  if (std::isinf(v)) return std::string(v < 0 ? "-" : "") + (t == DType::F32 ? "__builtin_inff()" : "__builtin_inf()");
  if (std::isnan(v)) return t == DType::F32 ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s + suffix;
}

// Emits the statements of one kernel, with per-loop common-subexpression temporaries.
class KernelEmitter {
public:
  explicit KernelEmitter(std::ostringstream& os) : os_(os) {}

  // The expression of `e` (a temporary name or a literal), emitting temporaries as needed.
  // Children are emitted first, so the CSE key of a node is built from its children's results
  // (linear in the tree, and equal subtrees share one temporary).
  std::string emit(const LExprPtr& e, const std::map<std::string, IndexExpr>& vars, const std::string& indent) {
    std::vector<std::string> kids;
    kids.reserve(e->args.size());
    for (const LExprPtr& a : e->args) kids.push_back(emit(a, vars, indent));
    std::string key = std::to_string(static_cast<int>(e->kind)) + e->op + std::string(dtypeName(e->dtype));
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

  void resetCse() { cse_.clear(); }
  // A value that later items read instead of loading it; per-element values live only until
  // the end of their loop, per-row values until the end of the row.
  void publish(const std::string& buffer, const std::string& name, bool perElement) {
    published_[buffer] = name;
    if (perElement) perElement_.insert(buffer);
  }
  void forgetPerElement() {
    for (const std::string& b : perElement_) published_.erase(b);
    perElement_.clear();
  }

private:
  std::string compute(const LExprPtr& e, const std::vector<std::string>& kids, const std::map<std::string, IndexExpr>& vars) {
    auto arg = [&](size_t i) { return kids.at(i); };
    switch (e->kind) {
      case LExpr::Kind::Load: {
        if (auto it = published_.find(e->op); it != published_.end()) return it->second;
        return e->op + "[" + e->index.substitute(vars).str() + "]";
      }
      case LExpr::Kind::LoadIndirect:
        return e->op + "[" + e->index.substitute(vars).str() + " + " + std::to_string(e->stride) + " * (fb_i64)(" + arg(0) + ")]";
      case LExpr::Kind::Constant: return literal(e->value, e->dtype);
      case LExpr::Kind::Index: return "((" + ctype(e->dtype) + ")(" + e->index.substitute(vars).str() + "))";
      case LExpr::Kind::Random:
        return "((" + ctype(e->dtype) + ")fb_rand(" + std::to_string(e->seed) + "UL, (fb_u64)(" + e->index.substitute(vars).str() + ")))";
      case LExpr::Kind::Cast:
        if (e->dtype == DType::Bool) return "(" + arg(0) + " != 0)";
        return "((" + ctype(e->dtype) + ")" + arg(0) + ")";
      case LExpr::Kind::Where: return arg(0) + " ? " + arg(1) + " : " + arg(2);
      case LExpr::Kind::Unary: {
        const std::string& op = e->op;
        std::string x = arg(0);
        if (op == "neg") return "-" + x;
        if (op == "rsqrt") return literal(1, e->dtype) + " / fb_sqrt(" + x + ")";
        if (op == "not") return "!" + x;
        return "fb_" + op + "(" + x + ")";
      }
      case LExpr::Kind::Binary: {
        static const std::map<std::string, std::string> infix = {
            {"add", "+"}, {"sub", "-"}, {"mul", "*"}, {"div", "/"}, {"eq", "=="}, {"ne", "!="}, {"lt", "<"},
            {"le", "<="}, {"gt", ">"}, {"ge", ">="}, {"and", "&&"}, {"or", "||"}};
        std::string a = arg(0), b = arg(1);
        if (auto it = infix.find(e->op); it != infix.end()) return a + " " + it->second + " " + b;
        if (e->op == "maximum") return "fb_max(" + a + ", " + b + ")";
        if (e->op == "minimum") return "fb_min(" + a + ", " + b + ")";
        if (e->op == "pow") return "fb_pow(" + a + ", " + b + ")";
        throw Error("CPU codegen: unknown binary op " + e->op);
      }
    }
    return "0";
  }

  std::ostringstream& os_;
  std::map<std::string, std::string> cse_;
  std::map<std::string, std::string> published_;
  std::set<std::string> perElement_;
  int temp_ = 0;
};

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

std::string reduceInit(const LoopNode& n, DType t) {
  if (n.reduceOp == "sum") return literal(0, t);
  return literal(n.reduceOp == "max" ? -INFINITY : INFINITY, t);
}

std::string reduceCombine(const LoopNode& n, const std::string& acc, const std::string& v) {
  if (n.reduceOp == "sum") return acc + " += " + v;
  return acc + " = fb_" + std::string(n.reduceOp == "max" ? "max" : "min") + "(" + acc + ", " + v + ")";
}

class ModuleWriter {
public:
  ModuleWriter(const LoopProgram& p, const Schedule& s, const std::function<std::string(NodeId)>& describe)
      : p_(p), s_(s), describe_(describe) {
    for (const Buffer& b : p.buffers) {
      bufferIndex_[b.name] = static_cast<int>(mod_.bufferOrder.size());
      mod_.bufferOrder.push_back(b.name);
    }
  }

  CppModule run() {
    os_ << "// Generated by Fusebox for " << p_.name << ": " << s_.kernels.size() << " kernels.\n"
        << "// Buffers are passed in one table; bufs[i] holds the buffer named in the comment below.\n";
    for (size_t i = 0; i < mod_.bufferOrder.size(); ++i) {
      const Buffer& b = p_.buffer(mod_.bufferOrder[i]);
      os_ << "//   bufs[" << i << "] " << b.name << ": " << dtypeName(b.dtype) << "[";
      for (size_t d = 0; d < b.layout.sizes.size(); ++d) os_ << (d ? ", " : "") << b.layout.sizes[d];
      os_ << "]\n";
    }
    os_ << cpuPrelude() << "\n";
    lines_ = countLines(os_.str());
    mod_.scratchBytes.assign(s_.kernels.size(), 0);
    for (const Kernel& k : s_.kernels) {
      GeneratedKernel gk;
      gk.kernel = k.id;
      gk.name = k.name;
      for (const KernelItem& it : k.items)
        for (NodeId n : p_.nodes[it.node].provenance) gk.provenance.push_back(n);
      std::sort(gk.provenance.begin(), gk.provenance.end());
      gk.provenance.erase(std::unique(gk.provenance.begin(), gk.provenance.end()), gk.provenance.end());
      std::string text = k.isExtern ? externFunction(k, gk) : kernelFunction(k, gk);
      gk.firstLine = lines_ + 1;
      lines_ += countLines(text);
      gk.lastLine = lines_;
      os_ << text;
      mod_.kernels.push_back(gk);
    }
    os_ << wrapper();
    mod_.source = os_.str();
    return std::move(mod_);
  }

private:
  static int countLines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

  std::string origin(const LoopNode& n) {
    std::string s = "n" + std::to_string(n.id) + " " + n.output;
    if (!n.scope.empty()) s += " [" + n.scope + "]";
    if (describe_) {
      std::string from;
      for (NodeId t : n.provenance) from += (from.empty() ? "" : ", ") + describe_(t);
      if (!from.empty()) s += " from " + from;
    }
    return s;
  }

  std::string pointerDecls(const Kernel& k) {
    std::set<std::string> used(k.readBuffers.begin(), k.readBuffers.end());
    used.insert(k.storedBuffers.begin(), k.storedBuffers.end());
    for (const KernelItem& it : k.items)  // indirect/broadcast loads of buffers written here
      for (const std::string& b : p_.nodes[it.node].reads()) used.insert(b);
    std::string s;
    std::set<std::string> written(k.storedBuffers.begin(), k.storedBuffers.end());
    for (const std::string& b : used) {
      bool local = std::find(k.localBuffers.begin(), k.localBuffers.end(), b) != k.localBuffers.end();
      if (local) continue;
      const Buffer& buf = p_.buffer(b);
      std::string t = ctype(buf.dtype);
      bool w = written.count(b) > 0;
      s += "  " + std::string(w ? "" : "const ") + t + "* __restrict " + safe(b) + " = (" + (w ? "" : "const ") + t + "*)bufs[" +
           std::to_string(bufferIndex_.at(b)) + "];\n";
    }
    return s;
  }

  static std::string safe(const std::string& name) {
    std::string s = "b_";
    for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
    return s;
  }

  // Loads in generated code use the C names of buffers.
  LExprPtr renameBuffers(const LExprPtr& e) {
    auto copy = std::make_shared<LExpr>(*e);
    if (e->kind == LExpr::Kind::Load || e->kind == LExpr::Kind::LoadIndirect) copy->op = safe(e->op);
    for (LExprPtr& a : copy->args) a = renameBuffers(a);
    return copy;
  }

  std::string kernelFunction(const Kernel& k, GeneratedKernel& gk) {
    std::ostringstream body;
    KernelEmitter em(body);
    int64_t M = k.M, K = k.K;
    bool pureFull = K == 1 && std::none_of(k.items.begin(), k.items.end(), [](const KernelItem& i) { return i.row; });
    if (pureFull) {  // pointwise kernels: tile the flat range by the innermost dim so k is contiguous
      const LoopNode& first = p_.nodes[k.items[0].node];
      int64_t inner = first.vars.empty() ? 1 : first.vars.back().size;
      if (inner > 1 && M % inner == 0) K = inner, M /= inner;
    }
    gk.rows = M;
    std::ostringstream os;
    os << "\n// " << k.name << ": grid " << M << " x " << K << ", " << k.items.size() << " node(s)\n";
    for (const KernelItem& it : k.items) os << "//   " << origin(p_.nodes[it.node]) << (it.row ? " (per row)" : "") << "\n";
    os << "//   ops:";
    for (const KernelItem& it : k.items)
      for (const std::string& pr : p_.nodes[it.node].prims) os << " " << (pr.rfind("prims.", 0) == 0 ? pr.substr(6) : pr);
    os << "\n";
    os << "extern \"C\" void " << k.name << "(fb_i64 m_begin, fb_i64 m_end, void* data) {\n";
    os << "  void* const* bufs = (void* const*)data;\n" << pointerDecls(k);
    // Column reductions (the reduced dim is the outer one in memory, e.g. a bias gradient summed
    // over rows) walk memory with a large stride along k. Process a block of consecutive rows m
    // together instead: the innermost loop then runs over m, contiguous, and vectorizes.
    bool columnMode = k.segments.size() == 1 && K > 1;
    if (columnMode) {
      bool contiguousInM = false;
      for (const KernelItem& it : k.items) {
        const LoopNode& n = p_.nodes[it.node];
        std::vector<std::pair<std::string, IndexExpr>> loads;
        n.body->collectLoads(loads);
        auto vars = kernelVarMap(n, it.row, M, K);
        for (auto& [b, ix] : loads) {
          IndexExpr e = ix.substitute(vars);
          auto v = e.variables();
          bool usesM = std::find(v.begin(), v.end(), "m") != v.end();
          if (coefficientOf(e, "k") == 1 && usesM) columnMode = false;  // row-contiguous data: keep rows
          if (coefficientOf(e, "m") == 1 && coefficientOf(e, "k") >= 16) contiguousInM = true;
        }
        if (it.row) columnMode = false;
      }
      columnMode = columnMode && contiguousInM;
    }
    if (columnMode) return columnKernel(k, gk, os, M, K);
    body << "  for (fb_i64 m = m_begin; m < m_end; ++m) {\n";
    auto isStored = [&](const std::string& b) {
      return std::find(k.storedBuffers.begin(), k.storedBuffers.end(), b) != k.storedBuffers.end();
    };
    for (const std::vector<int>& seg : k.segments) {
      const KernelItem& firstItem = k.items[seg[0]];
      if (firstItem.row) {
        const LoopNode& n = p_.nodes[firstItem.node];
        auto vars = kernelVarMap(n, true, M, K);
        body << "    // " << origin(n) << "\n";
        std::string v = em.emit(renameBuffers(n.body), vars, "    ");
        if (isStored(n.output)) body << "    " << safe(n.output) << "[" << storeIndexOf(n).substitute(vars).str() << "] = " << v << ";\n";
        em.publish(safe(n.output), v, false);
        continue;
      }
      // One loop over k for the segment; reductions accumulate in registers.
      std::vector<const LoopNode*> reductions;
      for (int i : seg)
        if (p_.nodes[k.items[i].node].kind == LoopNode::Kind::Reduction) reductions.push_back(&p_.nodes[k.items[i].node]);
      for (const LoopNode* r : reductions)
        body << "    " << ctype(p_.buffer(r->output).dtype) << " acc_" << safe(r->output) << " = "
             << reduceInit(*r, p_.buffer(r->output).dtype) << ";\n";
      std::string indent = K > 1 ? "      " : "    ";
      if (K > 1) body << "    for (fb_i64 k = 0; k < " << K << "; ++k) {\n";
      em.resetCse();
      for (int i : seg) {
        const LoopNode& n = p_.nodes[k.items[i].node];
        auto vars = kernelVarMap(n, false, M, K);
        body << indent << "// " << origin(n) << "\n";
        std::string v = em.emit(renameBuffers(n.body), vars, indent);
        if (n.kind == LoopNode::Kind::Reduction) {
          body << indent << reduceCombine(n, "acc_" + safe(n.output), v) << ";\n";
        } else {
          if (isStored(n.output)) body << indent << safe(n.output) << "[" << storeIndexOf(n).substitute(vars).str() << "] = " << v << ";\n";
          em.publish(safe(n.output), v, true);
        }
      }
      if (K > 1) body << "    }\n";
      em.forgetPerElement();
      em.resetCse();
      for (const LoopNode* r : reductions) {
        std::string acc = "acc_" + safe(r->output);
        if (isStored(r->output))
          body << "    " << safe(r->output) << "[" << storeIndexOf(*r).substitute(kernelVarMap(*r, true, M, K)).str() << "] = " << acc << ";\n";
        em.publish(safe(r->output), acc, false);
      }
    }
    body << "  }\n}\n";
    os << body.str();
    return os.str();
  }

  std::string columnKernel(const Kernel& k, GeneratedKernel& gk, std::ostringstream& os, int64_t M, int64_t K) {
    const int64_t block = 16;
    std::ostringstream body;
    KernelEmitter em(body);
    auto isStored = [&](const std::string& b) {
      return std::find(k.storedBuffers.begin(), k.storedBuffers.end(), b) != k.storedBuffers.end();
    };
    std::vector<const LoopNode*> reductions;
    for (const KernelItem& it : k.items)
      if (p_.nodes[it.node].kind == LoopNode::Kind::Reduction) reductions.push_back(&p_.nodes[it.node]);
    body << "  // column blocks: rows m0 .. m0+" << block - 1 << " advance together so the inner loop is contiguous\n";
    body << "  for (fb_i64 m0 = m_begin; m0 < m_end; m0 += " << block << ") {\n";
    body << "    const fb_i64 mn = m_end - m0 < " << block << " ? m_end - m0 : " << block << ";\n";
    for (const LoopNode* r : reductions) {
      std::string t = ctype(p_.buffer(r->output).dtype);
      body << "    " << t << " acc_" << safe(r->output) << "[" << block << "];\n"
           << "    for (fb_i64 i = 0; i < " << block << "; ++i) acc_" << safe(r->output) << "[i] = "
           << reduceInit(*r, p_.buffer(r->output).dtype) << ";\n";
    }
    body << "    for (fb_i64 k = 0; k < " << K << "; ++k) {\n";
    body << "      for (fb_i64 i = 0; i < mn; ++i) {\n        const fb_i64 m = m0 + i;\n";
    const std::string indent = "        ";
    for (const KernelItem& it : k.items) {
      const LoopNode& n = p_.nodes[it.node];
      auto vars = kernelVarMap(n, false, M, K);
      body << indent << "// " << origin(n) << "\n";
      std::string v = em.emit(renameBuffers(n.body), vars, indent);
      if (n.kind == LoopNode::Kind::Reduction) {
        body << indent << reduceCombine(n, "acc_" + safe(n.output) + "[i]", v) << ";\n";
      } else {
        if (isStored(n.output)) body << indent << safe(n.output) << "[" << storeIndexOf(n).substitute(vars).str() << "] = " << v << ";\n";
        em.publish(safe(n.output), v, true);
      }
    }
    body << "      }\n    }\n";
    for (const LoopNode* r : reductions)
      if (isStored(r->output))
        body << "    for (fb_i64 i = 0; i < mn; ++i) {\n      const fb_i64 m = m0 + i;\n      " << safe(r->output) << "["
             << storeIndexOf(*r).substitute(kernelVarMap(*r, true, M, K)).str() << "] = acc_" << safe(r->output) << "[i];\n    }\n";
    body << "  }\n}\n";
    gk.rows = M;
    os << body.str();
    return os.str();
  }

  std::string bufArg(const std::string& b, const char* type = "float") {
    return "(" + std::string(type) + "*)bufs[" + std::to_string(bufferIndex_.at(b)) + "]";
  }

  std::string externFunction(const Kernel& k, GeneratedKernel& gk) {
    const LoopNode& n = p_.nodes[k.items[0].node];
    AttrReader a{n.externAttrs};
    std::ostringstream os;
    gk.rows = 0;  // externs launch their own parallel loops
    std::string op = n.externOp.substr(6);
    os << "\n// " << k.name << ": " << origin(n) << "\n";
    os << "static void " << k.name << "(const FuseboxRuntime* rt, void* const* bufs, float* scratch) {\n";
    auto dims = [&](size_t i) { return n.externInputSizes.at(i); };
    const std::vector<int64_t>& out = p_.buffer(n.output).layout.sizes;
    auto pair = [&](const char* name, const std::vector<int64_t>& fallback) {
      std::vector<int64_t> v = a.attrs.count(name) && !a.ints(name).empty() ? a.ints(name) : fallback;
      return v.size() == 1 ? std::make_pair(v[0], v[0]) : std::make_pair(v[0], v[1]);
    };
    auto num = [](int64_t v) { return std::to_string(v); };
    if (op == "matmul") {
      bool ta = a.attrs.count("transpose_a") > 0, tb = a.attrs.count("transpose_b") > 0;
      std::vector<int64_t> sa = dims(0), sb = dims(1);
      if (ta) std::swap(sa[sa.size() - 1], sa[sa.size() - 2]);
      if (tb) std::swap(sb[sb.size() - 1], sb[sb.size() - 2]);
      int64_t nn = sa[sa.size() - 2], kk = sa.back(), mm = sb.back();
      int64_t batch = p_.buffer(n.output).layout.numel() / (nn * mm);
      if (tb) mod_.scratchBytes[k.id] = batch * kk * mm * 4;
      os << "  fb_matmul(rt, " << k.id << ", FbMatmul{" << bufArg(n.externInputs[0], "const float") << ", "
         << bufArg(n.externInputs[1], "const float") << ", " << bufArg(n.output) << ", " << batch << ", " << nn << ", " << kk
         << ", " << mm << ", " << ta << ", " << tb << "}, scratch);\n";
    } else if (op == "conv2d" || op == "conv2d_backward_input" || op == "conv2d_backward_weight") {
      std::vector<int64_t> x, w, y;
      if (op == "conv2d") x = dims(0), w = dims(1), y = out;
      else if (op == "conv2d_backward_input") x = out, w = dims(1), y = dims(0);
      else x = dims(0), w = out, y = dims(1);
      auto [sh, sw] = pair("stride", {1});
      auto [ph, pw] = pair("padding", {0});
      auto [dh, dw] = pair("dilation", {1});
      std::string fields = num(x[0]) + ", " + num(x[1]) + ", " + num(x[2]) + ", " + num(x[3]) + ", " + num(w[0]) + ", " + num(w[2]) +
                           ", " + num(w[3]) + ", " + num(y[2]) + ", " + num(y[3]) + ", " + num(a.i("groups")) + ", " + num(sh) + ", " +
                           num(sw) + ", " + num(ph) + ", " + num(pw) + ", " + num(dh) + ", " + num(dw);
      std::string in0 = bufArg(n.externInputs[0], "const float"), in1 = bufArg(n.externInputs[1], "const float");
      int64_t rows = op == "conv2d" ? x[0] * w[0] : op == "conv2d_backward_input" ? x[0] * x[1] : w[0] * w[1];
      const char* fn = op == "conv2d" ? "fb_conv_rows" : op == "conv2d_backward_input" ? "fb_conv_input_grad_rows" : "fb_conv_weight_grad_rows";
      os << "  FbConv c{" << in0 << ", " << in1 << ", " << bufArg(n.output) << ", " << fields << "};\n";
      // With BLAS, ungrouped convolutions run as one im2col + sgemm over the batch.
      int mode = op == "conv2d" ? 0 : op == "conv2d_backward_input" ? 1 : 2;
      int64_t P = y[2] * y[3], cols = x[1] * w[2] * w[3] * x[0] * P;
      mod_.scratchBytes[k.id] = (cols + w[0] * x[0] * P) * 4;
      os << "#if FB_HAVE_CBLAS\n";
      if (a.i("groups") == 1) os << "  fb_conv_gemm(rt, " << k.id << ", c, " << mode << ", scratch);\n  return;\n";
      os << "#endif\n";
      os << "  rt->launch(rt->ctx, " << k.id << ", " << fn << ", " << rows << ", &c);\n";
    } else if (op.find("pool2d") != std::string::npos) {
      bool grad = op.find("_backward") != std::string::npos;
      int mode = (op.rfind("max", 0) == 0 ? 0 : op.rfind("avg", 0) == 0 ? 1 : 2) + (grad ? 10 : 0);
      std::vector<int64_t> x = grad ? out : dims(0), y = grad ? dims(0) : out;
      std::string xArg = "0", gArg = "0";
      if (!grad) xArg = bufArg(n.externInputs[0], "const float");
      else {
        gArg = bufArg(n.externInputs[0], "const float");
        if (mode == 10) xArg = bufArg(n.externInputs[1], "const float");
      }
      int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
      if (mode % 10 != 2) {
        std::tie(kh, kw) = pair("kernel_size", {});
        std::tie(sh, sw) = pair("stride", a.ints("kernel_size"));
        std::tie(ph, pw) = pair("padding", {0});
      }
      os << "  FbPool q{" << xArg << ", " << gArg << ", " << bufArg(n.output) << ", " << x[0] * x[1] << ", " << x[2] << ", " << x[3]
         << ", " << y[2] << ", " << y[3] << ", " << kh << ", " << kw << ", " << sh << ", " << sw << ", " << ph << ", " << pw << ", "
         << mode << "};\n";
      os << "  rt->launch(rt->ctx, " << k.id << ", fb_pool_rows, " << x[0] * x[1] << ", &q);\n";
    } else if (op == "index_add") {
      std::vector<int64_t> xs = dims(0);
      int64_t dim = a.i("dim"), outer = 1, inner = 1;
      for (int64_t d = 0; d < static_cast<int64_t>(xs.size()); ++d) (d < dim ? outer : inner) *= d == dim ? 1 : xs[d];
      int64_t nIdx = dims(1)[0];
      os << "  struct Args { void* const* bufs; } args{bufs};\n";
      os << "  rt->launch(rt->ctx, " << k.id << ", [](fb_i64, fb_i64, void* d) {\n"
         << "    void* const* bufs = ((Args*)d)->bufs;\n"
         << "    fb_index_add(" << bufArg(n.externInputs[0], "const float") << ", " << bufArg(n.externInputs[1], "const fb_i64") << ", "
         << bufArg(n.externInputs[2], "const float") << ", " << bufArg(n.output) << ", " << outer << ", " << xs[dim] << ", " << nIdx
         << ", " << inner << ");\n  }, 1, &args);\n";
    } else {
      throw Error("CPU codegen: no extern implementation for " + n.externOp);
    }
    os << "}\n";
    for (size_t i = 0; i < n.externInputs.size(); ++i)
      if (p_.buffer(n.externInputs[i]).dtype != DType::F32 && !(op == "index_add" && i == 1))
        throw Error("CPU codegen: extern " + op + " supports f32 only, got " + std::string(dtypeName(p_.buffer(n.externInputs[i]).dtype)));
    return os.str();
  }

  std::string wrapper() {
    std::ostringstream os;
    os << "\n// The wrapper: runs every kernel in order. bufs[" << mod_.bufferOrder.size()
       << " + i] is scratch memory for kernel i (or null).\n";
    os << "extern \"C\" void fusebox_main(const FuseboxRuntime* rt, void* const* bufs) {\n";
    for (size_t i = 0; i < s_.kernels.size(); ++i) {
      const Kernel& k = s_.kernels[i];
      const GeneratedKernel& gk = mod_.kernels[i];
      if (k.isExtern)
        os << "  " << k.name << "(rt, bufs, (float*)bufs[" << mod_.bufferOrder.size() + i << "]);\n";
      else
        os << "  rt->launch(rt->ctx, " << k.id << ", " << k.name << ", " << gk.rows << ", (void*)bufs);\n";
    }
    os << "}\n";
    return os.str();
  }

  const LoopProgram& p_;
  const Schedule& s_;
  std::function<std::string(NodeId)> describe_;
  std::ostringstream os_;
  CppModule mod_;
  std::map<std::string, int> bufferIndex_;
  int lines_ = 0;
};

}  // namespace

CppModule generateCpp(const LoopProgram& p, const Schedule& s, const std::function<std::string(NodeId)>& describe) {
  return ModuleWriter(p, s, describe).run();
}

}  // namespace fusebox

#include "core/schedule/conv_epilogue.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace fusebox {

std::string ConvEpilogue::str() const {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  auto num = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  if (!bias.empty()) add("+ bias " + bias);
  if (!residual.empty()) add("+ residual " + residual);
  if (lower) add("max " + num(lo));
  if (upper) add("min " + num(hi));
  if (silu) add("silu");
  if (concat >= 0) add("into " + output + " from element " + std::to_string(outputOffset));
  return s.empty() ? "copy" : s;
}

namespace {

bool isF32Load(const LExpr& e) { return e.kind == LExpr::Kind::Load && e.dtype == DType::F32; }

// The composed expression of the epilogue, with every load of a buffer written inside replaced
// by its producer's body (all at the identity index `at`).
class Composer {
public:
  Composer(const LoopProgram& p, const std::map<std::string, const LoopNode*>& inside, const std::string& conv,
           const IndexExpr& at, const std::vector<LoopVar>& vars)
      : p_(p), inside_(inside), conv_(conv), at_(at), vars_(vars) {}

  LExprPtr node(const LoopNode& n, std::string& why) const {
    used_.insert(n.output);
    std::map<std::string, IndexExpr> rename;
    for (size_t i = 0; i < n.vars.size(); ++i) rename[n.vars[i].name] = IndexExpr::var(vars_[i].name, vars_[i].size);
    return expr(n.body->substitute(rename), why);
  }

private:
  LExprPtr expr(const LExprPtr& e, std::string& why) const {
    if (!e) return nullptr;
    if (e->kind == LExpr::Kind::Load && (e->buffer == conv_ || inside_.count(e->buffer))) {
      if (e->index != at_) {
        why = "reads " + e->buffer + "[" + e->index.str() + "], not the point being computed";
        return nullptr;
      }
      if (e->buffer == conv_) return e;
      return node(*inside_.at(e->buffer), why);
    }
    if (e->args.empty()) return e;
    auto copy = std::make_shared<LExpr>(*e);
    for (LExprPtr& a : copy->args)
      if (!(a = expr(a, why))) return nullptr;
    return copy;
  }

public:
  mutable std::set<std::string> used_;  // the inside buffers the composed epilogue reads

private:
  const LoopProgram& p_;
  const std::map<std::string, const LoopNode*>& inside_;
  const std::string& conv_;
  const IndexExpr& at_;
  const std::vector<LoopVar>& vars_;
};

bool isBinary(const LExpr& e, BinaryOp op) { return e.kind == LExpr::Kind::Binary && e.binaryOp == op && e.dtype == DType::F32; }
bool isUnary(const LExpr& e, UnaryOp op) { return e.kind == LExpr::Kind::Unary && e.unaryOp == op && e.dtype == DType::F32; }
bool isConstant(const LExpr& e, double v) { return e.kind == LExpr::Kind::Constant && e.value == v; }

// v when e is SiLU as decomposed, v * (1 / (exp(-v) + 1)) (either operand order of the mul and
// the add), else null. The two v's are the same expression (compared as text).
LExprPtr siluOperand(const LExpr& e) {
  if (!isBinary(e, BinaryOp::Mul)) return nullptr;
  for (int i = 0; i < 2; ++i) {
    const LExprPtr& v = e.args[i];
    const LExpr& d = *e.args[1 - i];
    if (!isBinary(d, BinaryOp::Div) || !isConstant(*d.args[0], 1) || !isBinary(*d.args[1], BinaryOp::Add)) continue;
    const LExpr& sum = *d.args[1];
    for (int j = 0; j < 2; ++j) {
      const LExpr& ex = *sum.args[j];
      if (!isConstant(*sum.args[1 - j], 1) || !isUnary(ex, UnaryOp::Exp) || !isUnary(*ex.args[0], UnaryOp::Neg)) continue;
      if (ex.args[0]->args[0]->str() == v->str()) return v;
    }
  }
  return nullptr;
}

}  // namespace

std::optional<ConvEpilogue> matchConvEpilogue(const LoopProgram& p, const std::vector<int>& nodes,
                                              const std::map<std::string, std::vector<int>>& readers, std::string& why) {
  std::vector<const LoopNode*> list;
  for (int id : nodes) list.push_back(&p.nodes[id]);
  return matchConvEpilogue(p, list, readers, why);
}

std::optional<ConvEpilogue> matchConvEpilogue(const LoopProgram& p, const std::vector<const LoopNode*>& nodes,
                                              const std::map<std::string, std::vector<int>>& readers, std::string& why) {
  const LoopNode* conv = nullptr;
  std::map<std::string, const LoopNode*> inside;  // pointwise outputs -> their nodes
  for (const LoopNode* np : nodes) {
    const LoopNode& n = *np;
    if (n.kind == LoopNode::Kind::Extern) {
      const ExternPrim& prim = externPrim(n.externOp);
      if (conv || prim.kind != ExternKind::Conv2d) {
        why = "no fusion across the extern " + prim.qualifiedName() + " (only a conv2d forward takes an epilogue)";
        return std::nullopt;
      }
      conv = &n;
    } else if (n.kind == LoopNode::Kind::Pointwise) {
      inside[n.output] = &n;
    } else {
      why = "a reduction cannot be a convolution's epilogue";
      return std::nullopt;
    }
  }
  if (!conv) {
    why = "no convolution";
    return std::nullopt;
  }
  const Buffer& out = p.buffer(conv->output);
  if (out.dtype != DType::F32 || out.layout.sizes.size() != 4) {
    why = "the convolution's output is not a 4-d f32 tensor";
    return std::nullopt;
  }
  // The canonical iteration variables: the convolution output's [N, O, OH, OW].
  std::vector<LoopVar> vars;
  std::vector<IndexExpr> idx;
  for (size_t i = 0; i < 4; ++i) {
    vars.push_back({"x" + std::to_string(i), out.layout.sizes[i]});
    idx.push_back(IndexExpr::var(vars[i].name, vars[i].size));
  }
  IndexExpr at = linearIndex(idx, Layout::contiguous(out.layout.sizes).strides);
  // Exactly one buffer leaves the kernel; the rest are read only inside it.
  std::set<int> in;
  for (const LoopNode* n : nodes) in.insert(n->id);
  const LoopNode* last = nullptr;
  for (const LoopNode* np : nodes) {
    const LoopNode& n = *np;
    if (n.kind == LoopNode::Kind::Pointwise) {
      std::vector<int64_t> sizes;
      for (const LoopVar& v : n.vars) sizes.push_back(v.size);
      if (sizes != out.layout.sizes) {
        why = n.output + " is not shaped like the convolution's output";
        return std::nullopt;
      }
    }
    bool leaves = std::find(p.outputs.begin(), p.outputs.end(), n.output) != p.outputs.end();
    auto r = readers.find(n.output);
    if (r != readers.end())
      for (int reader : r->second) leaves |= !in.count(reader);
    if (!leaves) continue;
    if (n.kind == LoopNode::Kind::Extern) {
      why = "the convolution's output " + n.output + " is read outside its epilogue";
      return std::nullopt;
    }
    if (last) {
      why = last->output + " and " + n.output + " are both read after the convolution's epilogue";
      return std::nullopt;
    }
    last = &n;
  }
  if (!last) {
    why = "the epilogue's result is never read";
    return std::nullopt;
  }
  Composer composer(p, inside, conv->output, at, vars);
  LExprPtr e = composer.node(*last, why);
  if (!e) return std::nullopt;
  // Every node runs after the convolution, on its output: a producer of the convolution's input
  // (shaped like its output when C == O) or a node the result never reads has no place here.
  for (const auto& [buffer, n] : inside)
    if (n->id < conv->id || !composer.used_.count(buffer)) {
      why = buffer + " is not computed from the convolution's output";
      return std::nullopt;
    }

  ConvEpilogue ep;
  ep.output = last->output;
  // act: SiLU, or min(max(v, lo), hi), either part optional, the constant second as the
  // decompositions write it.
  if (LExprPtr v = siluOperand(*e)) {
    ep.silu = true, e = v;
  } else {
    if (isBinary(*e, BinaryOp::Minimum) && e->args[1]->kind == LExpr::Kind::Constant) {
      ep.upper = true, ep.hi = e->args[1]->value, e = e->args[0];
    }
    if (isBinary(*e, BinaryOp::Maximum) && e->args[1]->kind == LExpr::Kind::Constant) {
      ep.lower = true, ep.lo = e->args[1]->value, e = e->args[0];
    }
  }
  // sum: ((conv + bias) + residual), each add either way round (f32 addition commutes exactly).
  IndexExpr channel = idx[1];
  // The loaded leaf of an add that is the bias or the residual, or null; the residual only outside the bias.
  auto operand = [&](const LExpr& a, const LExpr& b, bool& isBias) -> const LExpr* {
    for (const LExpr* leaf : {&b, &a}) {
      if (!isF32Load(*leaf) || leaf->buffer == conv->output || inside.count(leaf->buffer)) continue;
      int64_t numel = p.buffer(leaf->buffer).layout.numel();
      if ((isBias = ep.bias.empty() && leaf->index == channel && numel == vars[1].size)) return leaf;
      if (ep.residual.empty() && ep.bias.empty() && leaf->index == at && numel == out.layout.numel()) return leaf;
    }
    return nullptr;
  };
  while (isBinary(*e, BinaryOp::Add)) {
    bool isBias = false;
    const LExpr* leaf = operand(*e->args[0], *e->args[1], isBias);
    if (!leaf) break;
    (isBias ? ep.bias : ep.residual) = leaf->buffer;
    e = leaf == e->args[1].get() ? e->args[0] : e->args[1];
  }
  if (!(isF32Load(*e) && e->buffer == conv->output)) {
    why = "the epilogue computes more than a bias, a residual and a clamp or SiLU: " + e->str();
    return std::nullopt;
  }
  return ep;
}

}  // namespace fusebox

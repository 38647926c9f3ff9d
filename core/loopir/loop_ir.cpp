#include "core/loopir/loop_ir.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "core/ir/error.h"

namespace fusebox {

Layout Layout::contiguous(const std::vector<int64_t>& sizes) {
  Layout l;
  l.sizes = sizes;
  l.strides.assign(sizes.size(), 1);
  for (size_t i = sizes.size(); i-- > 1;) l.strides[i - 1] = l.strides[i] * sizes[i];
  return l;
}

int64_t Layout::numel() const {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

LExprPtr LExpr::load(const std::string& buffer, DType t, IndexExpr index) {
  auto e = std::make_shared<LExpr>();
  e->kind = Kind::Load;
  e->buffer = buffer;
  e->dtype = t;
  e->index = std::move(index);
  return e;
}

LExprPtr LExpr::loadIndirect(const std::string& buffer, DType t, IndexExpr base, int64_t stride, int64_t extent, LExprPtr value) {
  auto e = std::make_shared<LExpr>();
  e->kind = Kind::LoadIndirect;
  e->buffer = buffer;
  e->dtype = t;
  e->index = std::move(base);
  e->stride = stride;
  e->extent = extent;
  e->args = {std::move(value)};
  return e;
}

LExprPtr LExpr::constant(double v, DType t) {
  auto e = std::make_shared<LExpr>();
  e->kind = Kind::Constant;
  e->value = v;
  e->dtype = t;
  return e;
}

LExprPtr LExpr::unary(UnaryOp op, LExprPtr a, DType t) {
  auto e = std::make_shared<LExpr>();
  e->kind = Kind::Unary;
  e->unaryOp = op;
  e->dtype = t;
  e->args = {std::move(a)};
  return e;
}

LExprPtr LExpr::binary(BinaryOp op, LExprPtr a, LExprPtr b, DType t) {
  auto e = std::make_shared<LExpr>();
  e->kind = Kind::Binary;
  e->binaryOp = op;
  e->dtype = t;
  e->args = {std::move(a), std::move(b)};
  return e;
}

LExprPtr LExpr::where(LExprPtr c, LExprPtr a, LExprPtr b) {
  auto e = std::make_shared<LExpr>();
  e->kind = Kind::Where;
  e->dtype = a->dtype;
  e->args = {std::move(c), std::move(a), std::move(b)};
  return e;
}

LExprPtr LExpr::cast(LExprPtr a, DType t) {
  if (a->dtype == t) return a;
  auto e = std::make_shared<LExpr>();
  e->kind = Kind::Cast;
  e->dtype = t;
  e->args = {std::move(a)};
  return e;
}

LExprPtr LExpr::indexValue(IndexExpr ix, DType t) {
  auto e = std::make_shared<LExpr>();
  e->kind = Kind::Index;
  e->dtype = t;
  e->index = std::move(ix);
  return e;
}

void LExpr::collectLoads(std::vector<std::pair<std::string, IndexExpr>>& out) const {
  if (kind == Kind::Load || kind == Kind::LoadIndirect) out.emplace_back(buffer, index);
  for (const LExprPtr& a : args) a->collectLoads(out);
}

bool LExpr::readsIndirectly(const std::string& buffer) const {
  if (kind == Kind::LoadIndirect && this->buffer == buffer) return true;
  return std::any_of(args.begin(), args.end(), [&](const LExprPtr& a) { return a->readsIndirectly(buffer); });
}

int LExpr::countOps() const {
  int n = kind == Kind::Load || kind == Kind::Constant || kind == Kind::Index ? 0 : 1;
  for (const LExprPtr& a : args) n += a->countOps();
  return n;
}

LExprPtr LExpr::substitute(const std::map<std::string, IndexExpr>& vars) const {
  auto e = std::make_shared<LExpr>(*this);
  e->index = index.substitute(vars);
  for (LExprPtr& a : e->args) a = a->substitute(vars);
  return e;
}

std::string LExpr::str() const {
  auto arg = [&](size_t i) { return args.at(i)->str(); };
  switch (kind) {
    case Kind::Load: return "load(" + buffer + ", " + index.str() + ")";
    case Kind::LoadIndirect:
      return "load(" + buffer + ", " + index.str() + " + " + std::to_string(stride) + "*" + arg(0) + ")";
    case Kind::Constant: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.9g", value);
      return buf;
    }
    case Kind::Index: return "index(" + index.str() + ")";
    case Kind::Unary: return unaryMath(unaryOp).name + "(" + arg(0) + ")";
    case Kind::Binary: return binaryMath(binaryOp).name + "(" + arg(0) + ", " + arg(1) + ")";
    case Kind::Where: return "where(" + arg(0) + ", " + arg(1) + ", " + arg(2) + ")";
    case Kind::Cast: return "to_" + std::string(dtypeName(dtype)) + "(" + arg(0) + ")";
    case Kind::Random: return "rand(" + std::to_string(seed) + ", " + index.str() + ")";
  }
  return "?";
}

ExprExtent exprExtent(const LExpr& e, int64_t cap) {
  ExprExtent x;
  std::vector<std::pair<const LExpr*, int>> stack{{&e, 1}};
  while (!stack.empty() && x.nodes < cap) {
    auto [n, depth] = stack.back();
    stack.pop_back();
    ++x.nodes;
    x.depth = std::max(x.depth, depth);
    for (const LExprPtr& a : n->args) stack.emplace_back(a.get(), depth + 1);
  }
  return x;
}

std::vector<std::string> LoopNode::reads() const {
  std::vector<std::string> out;
  if (kind == Kind::Extern) {
    out = externInputs;
  } else {
    std::vector<std::pair<std::string, IndexExpr>> loads;
    body->collectLoads(loads);
    for (auto& [b, ix] : loads) out.push_back(b);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int64_t LoopNode::numel() const {
  int64_t n = 1;
  for (const LoopVar& v : vars) n *= v.size;
  return n;
}

int64_t LoopNode::reductionNumel() const {
  int64_t n = 1;
  for (const LoopVar& v : reduceVars) n *= v.size;
  return n;
}

std::string LoopNode::str() const {
  std::ostringstream os;
  auto ranges = [](const std::vector<LoopVar>& vs) {
    std::string s;
    for (const LoopVar& v : vs) s += (s.empty() ? "" : ", ") + v.name + " < " + std::to_string(v.size);
    return s;
  };
  switch (kind) {
    case Kind::Pointwise: os << output << " = Pointwise[" << ranges(vars) << "]: " << body->str(); break;
    case Kind::Reduction:
      os << output << " = Reduction[" << ranges(vars) << " | " << ranges(reduceVars) << "] " << reductionMath(reduceOp).name << ": "
         << body->str();
      break;
    case Kind::Extern: {
      os << output << " = Extern " << externPrim(externOp).qualifiedName() << "(";
      for (size_t i = 0; i < externInputs.size(); ++i) os << (i ? ", " : "") << externInputs[i];
      os << ")";
      break;
    }
  }
  return os.str();
}

const Buffer& LoopProgram::buffer(const std::string& name) const {
  for (const Buffer& b : buffers)
    if (b.name == name) return b;
  throw Error("loop IR: no buffer named '" + name + "'");
}

const LoopNode* LoopProgram::producer(const std::string& buffer) const {
  for (const LoopNode& n : nodes)
    if (n.output == buffer) return &n;
  return nullptr;
}

std::string LoopProgram::str() const {
  std::ostringstream os;
  os << "loop program " << name << "\n";
  for (const Buffer& b : buffers) {
    os << "  buffer " << b.name << ": " << dtypeName(b.dtype) << "[";
    for (size_t i = 0; i < b.layout.sizes.size(); ++i) os << (i ? ", " : "") << b.layout.sizes[i];
    os << "]" << (b.kind == Buffer::Kind::Input ? " input" : b.kind == Buffer::Kind::Output ? " output" : "") << "\n";
  }
  for (const LoopNode& n : nodes) os << "  " << n.str() << "\n";
  os << "  return";
  for (const std::string& o : outputs) os << " " << o;
  return os.str() + "\n";
}

}  // namespace fusebox

#include "core/schedule/concat_in_place.h"

#include <set>

namespace fusebox {

namespace {

// One select of the chain lower_gather.cpp's catOf builds: where(lt(index(x_d), bound), part, rest).
struct Select {
  std::string var;
  int64_t bound = 0;
  LExprPtr part, rest;
};

std::optional<Select> selectOf(const LExpr& e) {
  if (e.kind != LExpr::Kind::Where) return std::nullopt;
  const LExpr& c = *e.args[0];
  if (c.kind != LExpr::Kind::Binary || c.binaryOp != BinaryOp::Lt) return std::nullopt;
  const LExpr& i = *c.args[0];
  const LExpr& b = *c.args[1];
  if (i.kind != LExpr::Kind::Index || b.kind != LExpr::Kind::Constant) return std::nullopt;
  std::vector<std::string> vars = i.index.variables();
  if (vars.size() != 1 || i.index != IndexExpr::var(vars[0], i.index.maxValue() + 1)) return std::nullopt;
  return Select{vars[0], static_cast<int64_t>(b.value), e.args[1], e.args[2]};
}

}  // namespace

std::optional<ConcatInPlace> matchConcatInPlace(const LoopProgram& p, const LoopNode& n,
                                                const std::map<std::string, std::vector<int>>& readers, std::string& why) {
  if (n.kind != LoopNode::Kind::Pointwise || !n.body) {
    why = kNotAConcatenation;
    return std::nullopt;
  }
  // The chain: parts [bound_k-1, bound_k) of one variable, the last part the final `rest`.
  std::vector<std::pair<int64_t, LExprPtr>> parts;  // (first index, expression)
  std::string var;
  int64_t first = 0;
  LExprPtr e = n.body;
  while (std::optional<Select> s = selectOf(*e)) {
    if (!var.empty() && s->var != var) break;
    if (s->bound <= first) break;
    var = s->var;
    parts.emplace_back(first, s->part);
    first = s->bound;
    e = s->rest;
  }
  if (parts.empty()) {
    why = kNotAConcatenation;
    return std::nullopt;
  }
  parts.emplace_back(first, e);
  size_t d = 0;
  while (d < n.vars.size() && n.vars[d].name != var) ++d;
  if (d == n.vars.size() || first >= n.vars[d].size) {
    why = kNotAConcatenation;
    return std::nullopt;
  }
  for (size_t i = 0; i < d; ++i)
    if (n.vars[i].size != 1) {
      why = "its slices are not contiguous (dimension " + std::to_string(i) + " before the concatenated one has size " +
            std::to_string(n.vars[i].size) + ")";
      return std::nullopt;
    }
  int64_t inner = 1;
  for (size_t i = d + 1; i < n.vars.size(); ++i) inner *= n.vars[i].size;

  ConcatInPlace plan;
  plan.node = n.id;
  std::set<std::string> convs;
  for (size_t k = 0; k < parts.size(); ++k) {
    int64_t begin = parts[k].first, end = k + 1 < parts.size() ? parts[k + 1].first : n.vars[d].size;
    // The part as a node of its own over the slice's sizes: x_d counts from 0 within the slice.
    LoopNode slice = n;
    slice.vars[d].size = end - begin;
    std::map<std::string, IndexExpr> shift;
    for (size_t i = 0; i < n.vars.size(); ++i)
      shift[n.vars[i].name] = IndexExpr::var(n.vars[i].name, slice.vars[i].size) + IndexExpr(i == d ? begin : 0);
    slice.body = parts[k].second->substitute(shift);
    // Its convolution: the one extern conv2d whose output it reads.
    const LoopNode* conv = nullptr;
    for (const std::string& b : slice.reads()) {
      const LoopNode* prod = p.producer(b);
      if (!prod || prod->kind != LoopNode::Kind::Extern) continue;
      if (conv) {
        why = "slice " + std::to_string(k) + " reads two externs' outputs";
        return std::nullopt;
      }
      conv = prod;
    }
    if (!conv) {
      why = "slice " + std::to_string(k) + " is not a convolution's output";
      return std::nullopt;
    }
    if (!convs.insert(conv->output).second) {
      why = conv->output + " fills two slices";
      return std::nullopt;
    }
    std::optional<ConvEpilogue> ep = matchConvEpilogue(p, std::vector<const LoopNode*>{conv, &slice}, readers, why);
    if (!ep) {
      why = "slice " + std::to_string(k) + ": " + why;
      return std::nullopt;
    }
    ep->outputOffset = begin * inner;
    ep->concat = n.id;
    plan.slices.push_back({conv->id, *ep});
  }
  return plan;
}

}  // namespace fusebox

// What a fuzz target lets one input cost. Fusebox's own memory budget (memory_budget.h, by
// default half of physical RAM) must stop a hostile model before libFuzzer's malloc/RSS limit
// does (run_fuzz.sh gives 2560 MB; ASan's shadow and the corpus need the rest), so a huge tensor
// is the LimitError users get, not an out-of-memory report. And the reference interpreter, a
// plain loop nest under ASan, is only run on graphs of bounded work: a 60x80 max-pool window over
// a 1000x1000 image is a legal model that takes it minutes, which libFuzzer would call a hang.
#pragma once

#include <algorithm>
#include <cstdint>
#include <variant>

#include "core/ir/graph.h"
#include "core/ir/memory_budget.h"

namespace fusebox::fuzz {

constexpr int64_t kFuzzMemoryBudget = int64_t{1} << 30;
constexpr double kMaxInterpretedWork = 2e7;  // multiply-adds or element visits, ~1 s under ASan

inline void limitMemory() { setMemoryBudget(kFuzzMemoryBudget); }

// About how many element visits interpreting `g` takes: each node's inputs and outputs, times the
// window of a window op or the contraction of a matmul. Symbolic shapes count as unbounded.
inline double interpretationWork(const Graph& g) {
  auto numel = [&](ValueId v) {
    const Shape& s = g.type(v).shape;
    double n = 1;
    for (const Dim& d : s) n *= d.isConstant() ? static_cast<double>(d.value()) : 1e30;
    return n;
  };
  double total = 0;
  for (const Node& n : g.nodes()) {
    double out = 0, in = 0;
    for (ValueId v : n.outputs) out += numel(v);
    for (ValueId v : n.inputs) in += numel(v);
    double per = 1;
    if (auto k = n.attrs.find("kernel_size"); k != n.attrs.end())
      if (const auto* ks = std::get_if<std::vector<int64_t>>(&k->second))
        for (int64_t e : *ks) per *= static_cast<double>(e);
    const Shape* w = n.inputs.size() >= 2 ? &g.type(n.inputs[1]).shape : nullptr;
    auto dim = [](const Dim& d) { return d.isConstant() ? static_cast<double>(d.value()) : 1e30; };
    if (w && !w->empty()) {
      if (n.op == "matmul" || n.op == "bmm")  // [.., K, N]: K per output
        per = dim((*w)[w->size() >= 2 ? w->size() - 2 : 0]);
      else if (n.op == "linear" || n.op.rfind("conv", 0) == 0)  // [N, K] or [Cout, Cin/g, kh, kw]
        per = numel(n.inputs[1]) / std::max(1.0, dim((*w)[0]));
    }
    total += in + out * per;
  }
  return total;
}

}  // namespace fusebox::fuzz

// The machinery of lowering (core/loopir/lower.h) that the per-family lowering rules share:
// a prim value being lowered (Lowered), the Lowerer that owns the program being built, and the
// table from prim name to its rule. Each op family registers its rules in a file of its own
// (lower_pointwise.cpp, lower_views.cpp, lower_gather.cpp, lower_reduction.cpp,
// lower_extern.cpp), as the interpreter's kernels and the registry's schemas are.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/loopir/loop_ir.h"
#include "core/loopir/lower.h"
#include "core/loopir/provenance_set.h"

namespace fusebox {

using Ints = std::vector<int64_t>;
using Index = std::vector<IndexExpr>;
using Loader = std::function<LExprPtr(const Index&)>;

// A prim value during lowering: how to read element `idx`, and, when it is a strided view of
// a realized buffer, that view (externs can take it without a copy).
struct Lowered {
  Ints sizes;
  DType dtype = DType::F32;
  Loader loader;
  std::optional<std::pair<std::string, Layout>> view;
  ProvenanceSet provenance;        // traced nodes inlined into this value (not those realized before it)
  std::vector<PrimUse> prims;  // prim ops inlined into this value, in order
  int opCount = 0;
  // Upper bounds of what `loader` builds: the depth of the LExpr tree (and of the nested loader
  // calls, a view being one), and its size, a subtree inlined at several places counted at each
  // (views count one each too, so `prims` stays within it). A buffer read is 1 and 1.
  int depth = 1;
  int64_t size = 1;
  // A constant (full, iota, sym_size, or a view of one) computes nothing for whoever inlines it,
  // and CSE shares one across the model (its provenance lists every traced use): its provenance
  // goes to a node that realizes it, not to every node it is inlined into.
  bool constant = false;
  const ProvenanceSet& inlinedProvenance() const {
    static const ProvenanceSet none;
    return constant ? none : provenance;
  }
};

// What a rule is asked to lower: the prim node, its output sizes and dtype.
struct LoweringSite {
  const Node& node;
  Ints out;
  DType dtype;
};

class Lowerer;
using LoweringRule = std::function<Lowered(Lowerer&, const LoweringSite&)>;
using LoweringTable = std::map<std::string, LoweringRule>;  // keyed by prim name without "prims."

void addPointwiseLowerings(LoweringTable& t);
void addViewLowerings(LoweringTable& t);
void addGatherLowerings(LoweringTable& t);
void addReductionLowerings(LoweringTable& t);
void addExternLowerings(LoweringTable& t);

Loader stridedLoader(const std::string& buffer, DType t, const Layout& l);

class Lowerer {
public:
  explicit Lowerer(const Graph& g) : g_(g) {}
  LoopProgram run();

  // Input i of `n` as lowered so far.
  const Lowered& in(const Node& n, size_t i) { return values_.at(n.inputs.at(i)); }
  // A pointwise value computed by `loader` from all of n's inputs (inlined into it).
  Lowered pointwise(const Node& n, Ints sizes, DType t, Loader loader);
  // A view of `src`: keeps the strided-buffer form when `layout` is given (affine index map).
  Lowered viewOf(const Node& n, const Lowered& src, Ints sizes, Loader loader, std::optional<Layout> layout);
  // Realizes a pointwise value at once when its body has grown past the inlining limits.
  Lowered finishPointwise(const Node& n, Lowered l);
  // The value held in buffer `name` (contiguous).
  Lowered bufferValue(const std::string& name, const Ints& sizes, DType dt);

  // Realizes (or rebases) inputs `which` of `n`, the largest or deepest first, until the value
  // built from them, `extraDepth` levels and `extraSize` nodes of its own on top, fits the limits.
  void fitInputs(const Node& n, const std::vector<size_t>& which, int extraDepth, int64_t extraSize);
  static std::vector<size_t> allInputs(const Node& n);
  // Makes value `id` a contiguous buffer (a Pointwise node) unless it already is one.
  std::string realize(ValueId id) { return realizeLowered(values_.at(id), scopeOf(id)); }
  std::string realizeLowered(Lowered& l, const std::string& scope);
  // Makes value `id` a single buffer read: a strided view reads its buffer directly, anything
  // else is realized.
  void shrink(ValueId id);

  std::string newBuffer(DType t, const Ints& sizes);
  int64_t bufferNumel(const std::string& name);
  void addNode(LoopNode n);
  static std::vector<LoopVar> loopVars(const Ints& sizes, const char* prefix);
  static Index indexOf(const std::vector<LoopVar>& vs);

private:
  void countUses();
  Ints sizesOf(const TensorType& t, const Node* n);
  std::string scopeOf(ValueId v);
  Lowered lowerNode(const Node& n);

  const Graph& g_;
  LoopProgram prog_;
  std::map<ValueId, Lowered> values_;
  std::map<ValueId, int> uses_;
  std::map<std::string, int64_t> bufferNumel_;  // prog_.buffer(name).layout.numel() without the scan
  int nextBuffer_ = 0;
};

}  // namespace fusebox

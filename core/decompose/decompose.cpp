#include "core/decompose/decompose.h"

#include "core/decompose/decomposer.h"
#include "core/ir/passes.h"
#include "core/ir/verifier.h"
#include "core/ops/registry.h"

namespace fusebox {

namespace {

const DecompTable& table() {
  static const DecompTable t = [] {
    DecompTable t;
    addElementwiseDecompositions(t);
    addReductionDecompositions(t);
    addMatmulDecompositions(t);
    addNormDecompositions(t);
    addNnDecompositions(t);
    addShapeDecompositions(t);
    return t;
  }();
  return t;
}

}  // namespace

bool hasDecomposition(const std::string& op) { return table().count(op) > 0; }

Graph decompose(const Graph& g) {
  Graph out;
  out.name = g.name + ".prims";
  std::map<ValueId, ValueId> map;
  for (const GraphInput& in : g.inputs()) {
    const Value& v = g.value(in.value);
    map[v.id] = out.addInput(v.name, v.type, in.role, in.init);
  }
  GraphBuilder b(out);
  b.setScalarOp("prims.full");
  for (const Node& n : g.nodes()) {
    auto fn = table().find(n.op);
    if (fn == table().end()) throw Error(describeNode(n) + ": no decomposition for op '" + n.op + "'");
    std::vector<ValueId> ins;
    for (ValueId v : n.inputs) ins.push_back(map.at(v));
    b.setOrigin(n);
    Decomp d(b, n, ins, g.type(n.outputs[0]));
    ValueId result;
    try {
      result = fn->second(d);
    } catch (const ShapeError& e) {
      throw Error(describeNode(n) + ": decomposition failed: " + e.message());
    }
    if (out.type(result) != g.type(n.outputs[0]))
      throw VerifyError(describeNode(n) + ": decomposition produced " + out.type(result).str() + " instead of " +
                        g.type(n.outputs[0]).str());
    if (out.value(result).producer != kNoId && out.hasDefaultName(result))
      out.nameValue(result, g.value(n.outputs[0]).name);
    map[n.outputs[0]] = result;
  }
  std::vector<ValueId> outs;
  for (ValueId v : g.outputs()) outs.push_back(map.at(v));
  out.setOutputs(outs);
  // Ops decompose to shared prims (a forward cross-entropy and the row statistics its backward
  // formula saves both compute max and log-sum-exp): merge them so each is computed once.
  out = eliminateCommonSubexpressions(out);
  verifyGraph(out, primOpTyper());
  return out;
}

std::map<std::string, int> countOps(const Graph& g) {
  std::map<std::string, int> counts;
  for (const Node& n : g.nodes()) ++counts[n.op];
  return counts;
}

}  // namespace fusebox

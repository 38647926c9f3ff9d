#include "core/ir/verifier.h"

#include <algorithm>
#include <set>

namespace fusebox {

std::string describeNode(const Node& n) {
  std::string s = "node " + std::to_string(n.id) + " (" + n.op;
  if (!n.scope.empty()) s += ", scope " + n.scope;
  if (n.loc.valid()) s += ", at " + n.loc.str();
  return s + ")";
}

void verifyGraph(const Graph& g, const OpTyper& typer) {
  auto fail = [&](const std::string& msg) { throw VerifyError("graph '" + g.name + "': " + msg); };
  std::vector<bool> defined(g.values().size(), false);
  std::set<NodeId> nodeIds;

  for (const GraphInput& in : g.inputs()) {
    if (!g.hasValue(in.value)) fail("graph input refers to missing value " + std::to_string(in.value));
    if (defined[in.value]) fail("value " + std::to_string(in.value) + " is a graph input twice");
    defined[in.value] = true;
    const Value& v = g.value(in.value);
    if (v.producer != kNoId) fail("graph input '" + v.name + "' claims a producer node");
    if (in.role == InputRole::Param && !isConcrete(v.type.shape))
      fail("parameter '" + v.name + "' has symbolic shape " + shapeStr(v.type.shape) + "; parameters need concrete sizes");
  }

  for (const Node& n : g.nodes()) {
    std::string who = describeNode(n);
    if (!nodeIds.insert(n.id).second) fail(who + ": duplicate node id");
    if (n.provenance.empty()) fail(who + ": empty provenance");
    if (!std::is_sorted(n.provenance.begin(), n.provenance.end()) ||
        std::adjacent_find(n.provenance.begin(), n.provenance.end()) != n.provenance.end())
      fail(who + ": provenance must be sorted and unique");
    std::vector<TensorType> inTypes;
    for (ValueId v : n.inputs) {
      if (!g.hasValue(v)) fail(who + ": input refers to missing value " + std::to_string(v));
      if (!defined[v]) fail(who + ": uses value '" + g.value(v).name + "' before it is defined (graph is not topologically ordered)");
      inTypes.push_back(g.value(v).type);
    }
    for (ValueId v : n.outputs) {
      if (!g.hasValue(v)) fail(who + ": output refers to missing value " + std::to_string(v));
      if (defined[v]) fail(who + ": redefines value '" + g.value(v).name + "'");
      if (g.value(v).producer != n.id) fail(who + ": output '" + g.value(v).name + "' names another producer");
      defined[v] = true;
    }
    std::vector<TensorType> expected;
    try {
      expected = typer(n, inTypes);
    } catch (const Error& e) {
      fail(who + ": " + e.message());
    }
    if (expected.size() != n.outputs.size())
      fail(who + ": has " + std::to_string(n.outputs.size()) + " outputs, its op produces " + std::to_string(expected.size()));
    for (size_t i = 0; i < expected.size(); ++i)
      if (g.value(n.outputs[i]).type != expected[i])
        fail(who + ": output " + std::to_string(i) + " is recorded as " + g.value(n.outputs[i]).type.str() +
             " but the op infers " + expected[i].str());
  }

  if (g.outputs().empty()) fail("graph has no outputs");
  for (ValueId v : g.outputs())
    if (!g.hasValue(v) || !defined[v]) fail("graph output " + std::to_string(v) + " is not defined");
}

}  // namespace fusebox

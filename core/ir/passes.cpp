#include "core/ir/passes.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace fusebox {

Graph eliminateDeadCode(const Graph& g) {
  Graph out = g;
  std::vector<bool> live(g.values().size(), false);
  for (ValueId v : g.outputs()) live[v] = true;
  std::vector<bool> keepNode(g.nodes().size(), false);
  for (size_t i = g.nodes().size(); i-- > 0;) {
    const Node& n = g.nodes()[i];
    if (std::none_of(n.outputs.begin(), n.outputs.end(), [&](ValueId v) { return live[v]; })) continue;
    keepNode[i] = true;
    for (ValueId v : n.inputs) live[v] = true;
  }
  size_t i = 0;
  out.retainNodes([&](const Node&) { return keepNode[i++]; });
  return out;
}

Graph eliminateCommonSubexpressions(const Graph& g) {
  Graph out = g;
  using Key = std::tuple<std::string, std::vector<ValueId>, AttrMap>;
  std::map<Key, Node*> seen;
  std::map<ValueId, ValueId> replace;
  std::set<NodeId> dropped;
  std::map<Node*, std::vector<NodeId>> extraProvenance;  // merged once at the end, not per duplicate
  for (Node& n : out.mutableNodes()) {
    for (ValueId& v : n.inputs)
      if (auto r = replace.find(v); r != replace.end()) v = r->second;
    Key key{n.op, n.inputs, n.attrs};
    auto [it, inserted] = seen.emplace(key, &n);
    if (inserted) continue;
    Node& first = *it->second;
    for (size_t k = 0; k < n.outputs.size(); ++k) replace[n.outputs[k]] = first.outputs[k];
    // The surviving node now also stands for the duplicate's origins.
    std::vector<NodeId>& extra = extraProvenance[&first];
    extra.insert(extra.end(), n.provenance.begin(), n.provenance.end());
    dropped.insert(n.id);
  }
  for (auto& [first, extra] : extraProvenance) {
    std::vector<NodeId>& prov = first->provenance;
    prov.insert(prov.end(), extra.begin(), extra.end());
    std::sort(prov.begin(), prov.end());
    prov.erase(std::unique(prov.begin(), prov.end()), prov.end());
  }
  // Uses after the duplicate were rewritten above (nodes are in topological order); one more
  // sweep covers graph outputs and any use listed before its producer, in one pass.
  if (!replace.empty()) {
    for (Node& n : out.mutableNodes())
      for (ValueId& v : n.inputs)
        if (auto r = replace.find(v); r != replace.end()) v = r->second;
    std::vector<ValueId> outputs = out.outputs();
    for (ValueId& v : outputs)
      if (auto r = replace.find(v); r != replace.end()) v = r->second;
    out.setOutputs(outputs);
  }
  out.retainNodes([&](const Node& n) { return !dropped.count(n.id); });
  return out;
}

}  // namespace fusebox

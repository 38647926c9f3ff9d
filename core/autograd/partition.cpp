#include "core/autograd/partition.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/autograd/max_flow.h"
#include "core/ir/verifier.h"
#include "core/ops/reduction_math.h"
#include "core/ops/registry.h"

namespace fusebox {

const char* partitionerName(Partitioner p) { return p == Partitioner::MinCut ? "mincut" : "default"; }

std::string PartitionReport::str() const {
  std::string s = std::string("partitioner ") + partitionerName(partitioner) + ": " + std::to_string(saved.size()) + " saved tensors, " +
                  std::to_string(savedBytes) + " bytes saved, " + std::to_string(recomputedOps) + " ops recomputed in the backward\n  saved:";
  for (const std::string& n : saved) s += " " + n;
  return s + "\n";
}

int64_t estimatedBytes(const TensorType& t) {
  int64_t n = 1;
  for (const Dim& d : t.shape) {
    int64_t v = d.coeff();
    for (const auto& [sym, power] : d.symbols())
      for (int i = 0; i < power; ++i) v *= kSymbolicDimEstimate;
    n *= v;
  }
  return n * dtypeBytes(t.dtype);
}

namespace {

// Ops a fused kernel computes from its inputs without a library call.
bool fusible(const Node& n) {
  const OpSchema* s = OpRegistry::instance().find(n.op);
  if (!s) return false;
  switch (s->kind) {
    case OpKind::Elementwise:
    case OpKind::View:
    case OpKind::Creation:
    case OpKind::Random:
    case OpKind::Reduction:
    case OpKind::Norm: return true;
    default: return false;
  }
}

// Ops the backward may recompute: fusible ones whose value does not depend on the kernel that
// computes it. A sum (and a mean, softmax, layer or batch norm) is associated differently in a
// kernel of another shape, so its recomputed value could differ from the forward's in the last
// bit, and a gradient mask `x == amax(x)` against a saved value would then miss its element
// (tests/regressions/recomputed_layer_norm_amin_mask.fbx). Max and min are exact in any order.
bool recomputable(const Node& n) {
  if (!fusible(n)) return false;
  const OpSchema* s = OpRegistry::instance().find(n.op);
  if (s->kind == OpKind::Norm) return false;
  const ReductionMath* r = findReductionByPrim(n.op);
  return s->kind != OpKind::Reduction || (r && r->exactInAnyOrder);
}

// A graph over a subset of `g`'s nodes (kept in order), with the given inputs and outputs.
Graph extract(const Graph& g, const std::string& name, const std::vector<std::pair<ValueId, InputRole>>& inputs,
              const std::vector<bool>& keep, const std::vector<ValueId>& outputs, const std::set<NodeId>& recomputed = {}) {
  Graph out;
  out.name = name;
  std::map<ValueId, ValueId> map;
  for (const auto& [v, role] : inputs) {
    const GraphInput* info = g.inputInfo(v);
    map[v] = out.addInput(g.value(v).name, g.type(v), role, info ? info->init : InitSpec{});
  }
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    if (!keep[i]) continue;
    const Node& n = g.nodes()[i];
    std::vector<ValueId> ins;
    for (ValueId v : n.inputs) {
      auto it = map.find(v);
      if (it == map.end()) throw VerifyError(describeNode(n) + ": partition lost input '" + g.value(v).name + "'");
      ins.push_back(it->second);
    }
    std::vector<TensorType> types;
    for (ValueId v : n.outputs) types.push_back(g.type(v));
    NodeId id = out.addNode(n.op, ins, n.attrs, types, n.scope, n.loc, n.provenance);
    if (recomputed.count(n.id)) out.markRecomputed(id);
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      ValueId nv = out.node(id).outputs[k];
      out.nameValue(nv, g.value(n.outputs[k]).name, g.value(n.outputs[k]).named);
      map[n.outputs[k]] = nv;
    }
  }
  std::vector<ValueId> outs;
  for (ValueId v : outputs) outs.push_back(map.at(v));
  out.setOutputs(outs);
  return out;
}

// Saving an intermediate whose every user is fusible costs twice its bytes: the forward must
// write it to memory only because it is saved, where fusion would have kept it in registers, and
// the backward reads it back. Graph inputs (and values a non-fusible op materializes anyway) cost
// their bytes once. PyTorch's min-cut partitioner weighs saved values the same way.
int64_t saveCost(const Graph& g, ValueId v, const std::vector<const Node*>& users) {
  bool onlyFusibleUsers = !users.empty() && std::all_of(users.begin(), users.end(), [](const Node* u) { return fusible(*u); });
  return estimatedBytes(g.type(v)) * (onlyFusibleUsers ? 2 : 1);
}

// A reduction whose output is at least 4x smaller than its input is cheap to save and costly to
// recompute (it reads the whole input again): it runs in the forward (as in PyTorch's
// partitioner). E.g. the row max and log-sum-exp of a cross-entropy, a layer norm's mean.
bool shrinksTooMuchToRecompute(const Graph& g, const Node& n) {
  const OpSchema* s = OpRegistry::instance().find(n.op);
  if (!s || s->kind != OpKind::Reduction || n.inputs.empty()) return false;
  return estimatedBytes(g.type(n.outputs[0])) * 4 <= estimatedBytes(g.type(n.inputs[0]));
}

}  // namespace

Partition partitionJointGraph(const JointGraph& joint, Partitioner partitioner) {
  const Graph& g = joint.graph;
  const size_t numValues = g.values().size();
  std::vector<bool> tangentDep(numValues, false), isPrimal(numValues, false);
  std::vector<ValueId> tangents;
  std::vector<std::pair<ValueId, InputRole>> primals;
  for (const GraphInput& in : g.inputs()) {
    if (in.role == InputRole::Tangent) {
      tangentDep[in.value] = true;
      tangents.push_back(in.value);
    } else {
      isPrimal[in.value] = true;
      primals.emplace_back(in.value, in.role);
    }
  }
  for (const Node& n : g.nodes()) {
    bool dep = std::any_of(n.inputs.begin(), n.inputs.end(), [&](ValueId v) { return tangentDep[v]; });
    for (ValueId o : n.outputs) tangentDep[o] = dep;
  }
  std::vector<ValueId> fwdOutputs(g.outputs().begin(), g.outputs().begin() + joint.numForwardOutputs);
  std::vector<ValueId> gradOutputs(g.outputs().begin() + joint.numForwardOutputs, g.outputs().end());
  auto producerIndex = [&](ValueId v) -> int {
    NodeId p = g.value(v).producer;
    if (p == kNoId) return -1;
    for (size_t i = 0; i < g.nodes().size(); ++i)
      if (g.nodes()[i].id == p) return static_cast<int>(i);
    return -1;
  };

  std::set<ValueId> saved;
  if (partitioner == Partitioner::Default) {
    // Everything computable without tangents runs in the forward; the backward gets what it uses.
    for (const Node& n : g.nodes())
      if (tangentDep[n.outputs[0]])
        for (ValueId v : n.inputs)
          if (!tangentDep[v]) saved.insert(v);
    for (ValueId v : gradOutputs)
      if (!tangentDep[v]) saved.insert(v);
  } else {
    // Vertices: value v -> 2v (in), 2v+1 (out); then source and sink.
    int source = static_cast<int>(2 * numValues), sink = source + 1;
    MaxFlow flow(sink + 1);
    for (const GraphInput& in : g.inputs()) {
      int v = in.value;
      if (in.role == InputRole::Tangent) {
        flow.addEdge(2 * v, sink, MaxFlow::kInfinite);
        continue;
      }
      flow.addEdge(source, 2 * v, MaxFlow::kInfinite);
      flow.addEdge(2 * v, 2 * v + 1, estimatedBytes(g.type(v)));
    }
    // Users per value, to tell intermediates that only feed fusible ops (see saveCost).
    std::vector<std::vector<const Node*>> users(numValues);
    for (const Node& n : g.nodes())
      for (ValueId in : n.inputs) users[in].push_back(&n);
    for (const Node& n : g.nodes()) {
      for (ValueId o : n.outputs) {
        if (tangentDep[o]) {
          flow.addEdge(2 * o, sink, MaxFlow::kInfinite);  // must run in the backward
          continue;
        }
        if (!recomputable(n) || shrinksTooMuchToRecompute(g, n))
          flow.addEdge(source, 2 * o, MaxFlow::kInfinite);  // must run in the forward
        flow.addEdge(2 * o, 2 * o + 1, saveCost(g, o, users[o]));
      }
      for (ValueId in : n.inputs)
        for (ValueId o : n.outputs) flow.addEdge(2 * in + 1, 2 * o, MaxFlow::kInfinite);
    }
    for (ValueId v : gradOutputs)
      if (!tangentDep[v]) flow.addEdge(2 * v + 1, sink, MaxFlow::kInfinite);
    flow.run(source, sink);
    std::vector<bool> side = flow.sourceSide(source);
    for (size_t v = 0; v < numValues; ++v)
      if (side[2 * v] && !side[2 * v + 1]) saved.insert(static_cast<ValueId>(v));
  }

  // Backward nodes: everything needed for the gradients, stopping at saved values and tangents.
  std::vector<bool> inBackward(g.nodes().size(), false), inForward(g.nodes().size(), false);
  std::vector<ValueId> stack(gradOutputs.begin(), gradOutputs.end());
  std::set<ValueId> visited;
  while (!stack.empty()) {
    ValueId v = stack.back();
    stack.pop_back();
    if (!visited.insert(v).second || saved.count(v) || (tangentDep[v] && g.value(v).producer == kNoId)) continue;
    int p = producerIndex(v);
    if (p < 0) {  // a primal the backward needs but the cut did not save
      saved.insert(v);
      continue;
    }
    inBackward[p] = true;
    for (ValueId in : g.nodes()[p].inputs) stack.push_back(in);
  }
  // Forward nodes: everything needed for the forward outputs and the saved tensors.
  stack.assign(fwdOutputs.begin(), fwdOutputs.end());
  stack.insert(stack.end(), saved.begin(), saved.end());
  visited.clear();
  while (!stack.empty()) {
    ValueId v = stack.back();
    stack.pop_back();
    if (!visited.insert(v).second) continue;
    int p = producerIndex(v);
    if (p < 0) continue;
    inForward[p] = true;
    for (ValueId in : g.nodes()[p].inputs) stack.push_back(in);
  }

  Partition part;
  part.report.partitioner = partitioner;
  std::vector<ValueId> savedList;
  // Saved tensors in a stable order: primals first, then by producer.
  for (const auto& [v, role] : primals)
    if (saved.count(v)) savedList.push_back(v);
  for (const Node& n : g.nodes())
    for (ValueId o : n.outputs)
      if (saved.count(o)) savedList.push_back(o);
  for (ValueId v : savedList) {
    part.report.saved.push_back(g.value(v).name);
    part.report.savedBytes += estimatedBytes(g.type(v));
  }
  for (size_t i = 0; i < g.nodes().size(); ++i)
    if (inBackward[i] && !tangentDep[g.nodes()[i].outputs[0]]) part.report.recomputed.push_back(g.nodes()[i].id);
  part.report.recomputedOps = part.report.recomputed.size();

  std::vector<ValueId> forwardOuts = fwdOutputs;
  forwardOuts.insert(forwardOuts.end(), savedList.begin(), savedList.end());
  std::string base = g.name.substr(0, g.name.rfind(".joint"));
  part.forward = extract(g, base + ".forward", primals, inForward, forwardOuts);
  std::vector<std::pair<ValueId, InputRole>> bwInputs;
  for (ValueId v : savedList) bwInputs.emplace_back(v, InputRole::Saved);
  for (ValueId t : tangents) bwInputs.emplace_back(t, InputRole::Tangent);
  part.backward = extract(g, base + ".backward", bwInputs, inBackward, gradOutputs,
                          std::set<NodeId>(part.report.recomputed.begin(), part.report.recomputed.end()));
  verifyGraph(part.forward, torchOpTyper());
  verifyGraph(part.backward, torchOpTyper());
  return part;
}

}  // namespace fusebox

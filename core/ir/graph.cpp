#include "core/ir/graph.h"

#include <algorithm>

namespace fusebox {

std::string TensorType::str() const { return std::string(dtypeName(dtype)) + shapeStr(shape); }

std::string InitSpec::str() const {
  auto num = [](double v) { return attrStr(Attr(v)); };
  switch (kind) {
    case Kind::Randn: return "randn(seed=" + std::to_string(seed) + ", std=" + num(a) + ")";
    case Kind::Uniform:
      return "uniform(seed=" + std::to_string(seed) + ", low=" + num(a) + ", high=" + num(b) + ")";
    case Kind::Zeros: return "zeros";
    case Kind::Ones: return "ones";
    case Kind::Full: return "full(" + num(a) + ")";
    case Kind::Values: return "values(" + std::to_string(values ? values->size() : 0) + " elements)";
  }
  return "?";
}

ValueId Graph::addInput(const std::string& name, TensorType type, InputRole role, InitSpec init) {
  ValueId id = static_cast<ValueId>(values_.size());
  values_.push_back(Value{id, std::move(type), uniqueName(name), kNoId, true});
  names_.insert(values_.back().name);
  inputIndex_.resize(values_.size(), -1);
  inputIndex_[id] = static_cast<int32_t>(inputs_.size());
  inputs_.push_back(GraphInput{id, role, init});
  return id;
}

void Graph::markNotTrainable(ValueId input) {
  if (input < 0 || static_cast<size_t>(input) >= inputIndex_.size() || inputIndex_[input] < 0) throw Error("internal error: value is not a graph input");
  inputs_[static_cast<size_t>(inputIndex_[input])].trainable = false;
}

const char* inputRoleName(InputRole r) {
  switch (r) {
    case InputRole::Input: return "input";
    case InputRole::Param: return "param";
    case InputRole::Tangent: return "tangent";
    case InputRole::Saved: return "saved";
  }
  return "?";
}

void Graph::markRecomputed(NodeId id) {
  node(id);  // throws for an unknown id
  nodes_[nodeIndex_[id]].recomputed = true;
}

NodeId Graph::addNode(const std::string& op, std::vector<ValueId> inputs, AttrMap attrs,
                      const std::vector<TensorType>& outputTypes, std::string scope, SourceLoc loc,
                      std::vector<NodeId> provenance) {
  NodeId id = nextNodeId_++;
  Node n;
  n.id = id;
  n.op = op;
  n.inputs = std::move(inputs);
  n.attrs = std::move(attrs);
  n.provenance = provenance.empty() ? std::vector<NodeId>{id} : std::move(provenance);
  n.scope = std::move(scope);
  n.loc = std::move(loc);
  std::string base = primBaseName(op);
  for (const TensorType& t : outputTypes) {
    ValueId v = static_cast<ValueId>(values_.size());
    values_.push_back(Value{v, t, uniqueName(base), id, false});
    names_.insert(values_.back().name);
    n.outputs.push_back(v);
  }
  nodeIndex_.resize(nextNodeId_, -1);
  nodeIndex_[id] = static_cast<int32_t>(nodes_.size());
  nodes_.push_back(std::move(n));
  return id;
}

void Graph::nameValue(ValueId v, const std::string& base, bool chosen) {
  Value& val = values_.at(v);
  val.named = chosen;
  if (val.name == base) return;
  names_.erase(val.name);
  val.name = uniqueName(base);
  names_.insert(val.name);
}

const Value& Graph::value(ValueId id) const {
  if (!hasValue(id)) throw VerifyError("graph '" + name + "': no value with id " + std::to_string(id));
  return values_[id];
}

void Graph::reindex() {
  std::fill(nodeIndex_.begin(), nodeIndex_.end(), -1);
  for (size_t i = 0; i < nodes_.size(); ++i) nodeIndex_[nodes_[i].id] = static_cast<int32_t>(i);
}

void Graph::replaceUses(ValueId from, ValueId to) {
  for (Node& n : nodes_)
    for (ValueId& v : n.inputs)
      if (v == from) v = to;
  for (ValueId& v : outputs_)
    if (v == from) v = to;
}

bool Graph::hasNode(NodeId id) const {
  return id >= 0 && id < static_cast<NodeId>(nodeIndex_.size()) && nodeIndex_[id] >= 0;
}

const Node& Graph::node(NodeId id) const {
  if (!hasNode(id)) throw VerifyError("graph '" + name + "': no node with id " + std::to_string(id));
  return nodes_[nodeIndex_[id]];
}

const GraphInput* Graph::inputInfo(ValueId id) const {
  if (id < 0 || id >= static_cast<ValueId>(inputIndex_.size()) || inputIndex_[id] < 0) return nullptr;
  return &inputs_[inputIndex_[id]];
}

}  // namespace fusebox

// The value-typed graph IR shared by stages 1-3 (traced, joint, prim graphs).
// A Graph owns its values and nodes; nodes are kept in topological order and refer to values
// by id. Ids are assigned at creation and never reused, so they stay stable across printing,
// sessions and later stages. Every node carries provenance (the traced node ids it came from)
// and its module scope (e.g. "attn.c_attn").
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/attr.h"
#include "core/ir/dtype.h"
#include "core/ir/error.h"
#include "core/ir/name_table.h"
#include "core/ir/shape.h"

namespace fusebox {

using NodeId = int32_t;
using ValueId = int32_t;
constexpr int32_t kNoId = -1;

struct TensorType {
  DType dtype = DType::F32;
  Shape shape;

  bool operator==(const TensorType& o) const { return dtype == o.dtype && shape == o.shape; }
  bool operator!=(const TensorType& o) const { return !(*this == o); }
  std::string str() const;  // "f32[B, 768]"
};

// How a parameter's (or a random input's) data is made, deterministically from a seed.
struct InitSpec {
  enum class Kind { Randn, Uniform, Zeros, Ones, Full, Values };
  Kind kind = Kind::Randn;
  uint64_t seed = 0;
  double a = 1.0;  // randn: std; uniform: low; full: value
  double b = 0.0;  // uniform: high
  // values: the given elements, row-major (an imported model's weights); shared, not copied with the graph
  std::shared_ptr<const std::vector<double>> values;
  std::string str() const;
};

enum class InputRole {
  Input,    // model input (data)
  Param,    // parameter (weights, buffers)
  Tangent,  // joint graphs: the incoming gradient of a forward output
  Saved,    // backward graphs: a tensor the forward graph saved for the backward
};
const char* inputRoleName(InputRole r);

struct GraphInput {
  ValueId value = kNoId;
  InputRole role = InputRole::Input;
  InitSpec init;                 // params: how to initialize; inputs: how the demo data is drawn
  // Params: whether a training step differentiates it. An imported model's constants (ONNX
  // Constant nodes, values folded at import, batch-norm statistics) are params that are not.
  bool trainable = true;
};

struct Value {
  ValueId id = kNoId;
  TensorType type;
  std::string name;
  NodeId producer = kNoId;  // kNoId for graph inputs
  bool named = false;       // a name someone chose (vs. the op-based one addNode made up)
};

// Prims are the ops named "prims.<name>" (core/ops/ops_prims.cpp); the tables of op families
// key them by <name>. primBaseName strips the prefix (any other op is returned as it is).
inline constexpr std::string_view kPrimPrefix = "prims.";
inline std::string primBaseName(const std::string& op) {
  return op.rfind(kPrimPrefix, 0) == 0 ? op.substr(kPrimPrefix.size()) : op;
}

struct Node {
  NodeId id = kNoId;
  std::string op;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  AttrMap attrs;
  std::vector<NodeId> provenance;  // sorted, unique traced-node ids
  std::string scope;               // dotted module path, "" at top level
  SourceLoc loc;                   // where in the model source it was written, if known
  // A forward op that the backward graph computes again instead of loading a saved tensor
  // (the min-cut partitioner's rematerialization); its decompositions and kernels say so.
  bool recomputed = false;
};

class Graph {
public:
  std::string name;

  ValueId addInput(const std::string& name, TensorType type, InputRole role, InitSpec init = {});
  void markNotTrainable(ValueId input);  // see GraphInput::trainable
  // Appends a node (it must come after the producers of its inputs) and creates one output
  // value per type. Empty provenance means the node's own id (a traced node).
  NodeId addNode(const std::string& op, std::vector<ValueId> inputs, AttrMap attrs,
                 const std::vector<TensorType>& outputTypes, std::string scope = {},
                 SourceLoc loc = {}, std::vector<NodeId> provenance = {});
  // Keeps only the nodes for which `keep` is true (order preserved); their values stay valid.
  template <class Pred>
  void retainNodes(Pred keep) {
    std::vector<Node> kept;
    for (Node& n : nodes_)
      if (keep(static_cast<const Node&>(n))) kept.push_back(std::move(n));
    nodes_ = std::move(kept);
    reindex();
  }
  void markRecomputed(NodeId id);
  // Replaces every use of `from` (node inputs and graph outputs) by `to`.
  void replaceUses(ValueId from, ValueId to);
  void setOutputs(std::vector<ValueId> outputs) { outputs_ = std::move(outputs); }
  // Gives a value a readable name, made unique with a suffix ("h", "h_1") if already taken.
  // `chosen` false copies a made-up name (between stages) without marking it as chosen.
  void nameValue(ValueId v, const std::string& base, bool chosen = true);
  // Whether a value still has the name addNode made up from its op ("relu_3").
  bool hasDefaultName(ValueId v) const { return !value(v).named; }

  const std::vector<GraphInput>& inputs() const { return inputs_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  std::vector<Node>& mutableNodes() { return nodes_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  const std::vector<Value>& values() const { return values_; }

  const Value& value(ValueId id) const;
  const Node& node(NodeId id) const;
  bool hasValue(ValueId id) const { return id >= 0 && id < static_cast<ValueId>(values_.size()); }
  bool hasNode(NodeId id) const;
  const GraphInput* inputInfo(ValueId id) const;  // nullptr if `id` is not a graph input
  const TensorType& type(ValueId id) const { return value(id).type; }

private:
  std::string uniqueName(const std::string& base) { return names_.unique(base); }
  void reindex();

  std::vector<Value> values_;  // indexed by ValueId
  NameTable names_;            // every value's name, for unique naming
  std::vector<Node> nodes_;    // topological order
  std::vector<int32_t> nodeIndex_;  // NodeId -> index in nodes_, or -1
  std::vector<GraphInput> inputs_;
  std::vector<int32_t> inputIndex_;  // ValueId -> index in inputs_, or -1
  std::vector<ValueId> outputs_;
  NodeId nextNodeId_ = 0;
};

}  // namespace fusebox

#include "core/autograd/joint_graph.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/autograd/derivatives.h"
#include "core/ir/passes.h"
#include "core/ir/verifier.h"
#include "core/ops/registry.h"

namespace fusebox {

JointGraph buildJointGraph(const Graph& forward, const JointOptions& options) {
  JointGraph jg;
  Graph& g = jg.graph;
  g = forward;
  g.name = forward.name + ".joint";
  jg.numForwardOutputs = forward.outputs().size();

  // Which primals get gradients.
  std::set<std::string> wanted(options.gradInputs.begin(), options.gradInputs.end());
  std::vector<ValueId> targets;
  for (const GraphInput& in : forward.inputs()) {
    const Value& v = forward.value(in.value);
    bool isInput = in.role == InputRole::Input;
    if (in.role == InputRole::Param && !in.trainable) continue;  // an imported model's constant
    if (isInput && wanted.erase(v.name) == 0 && !(options.allFloatInputs && isFloating(v.type.dtype))) continue;
    if (!isFloating(v.type.dtype)) {
      if (isInput && !options.allFloatInputs) throw Error("input '" + v.name + "' is " + v.type.str() + ": only floating-point inputs have gradients");
      continue;
    }
    targets.push_back(v.id);
  }
  if (!wanted.empty()) throw Error("model '" + forward.name + "' has no input named '" + *wanted.begin() + "'");
  if (targets.empty())
    throw Error("model '" + forward.name + "' has no floating-point parameter to train, so a training step has no gradient to compute");

  // Values whose gradient matters: those that depend on a target through differentiable ops.
  std::vector<bool> requiresGrad(g.values().size(), false);
  for (ValueId t : targets) requiresGrad[t] = true;
  for (const Node& n : forward.nodes()) {
    if (!isDifferentiable(n.op)) continue;
    bool any = std::any_of(n.inputs.begin(), n.inputs.end(), [&](ValueId v) { return requiresGrad[v]; });
    for (ValueId o : n.outputs) requiresGrad[o] = any && isFloating(g.type(o).dtype);
  }

  GraphBuilder b(g);
  std::map<ValueId, ValueId> grads;
  auto accumulate = [&](ValueId v, ValueId grad) {
    auto it = grads.find(v);
    if (it == grads.end()) grads[v] = grad;
    else it->second = b.emit("add", {it->second, grad});
  };
  for (size_t i = 0; i < forward.outputs().size(); ++i) {
    ValueId out = forward.outputs()[i];
    if (!requiresGrad[out]) continue;
    ValueId tangent = g.addInput("tangent_" + forward.value(out).name, g.type(out), InputRole::Tangent);
    b.setOrigin("", {}, {});
    accumulate(out, tangent);
  }

  const std::vector<Node> forwardNodes = forward.nodes();
  for (auto it = forwardNodes.rbegin(); it != forwardNodes.rend(); ++it) {
    const Node& n = *it;
    auto gi = grads.find(n.outputs[0]);
    if (gi == grads.end()) continue;
    std::vector<bool> needs;
    for (ValueId v : n.inputs) needs.push_back(requiresGrad[v]);
    if (std::none_of(needs.begin(), needs.end(), [](bool x) { return x; })) continue;
    const DerivativeFn* d = findDerivative(n.op);
    if (!d) throw Error(describeNode(n) + ": op '" + n.op + "' has no derivative formula (second-order gradients are not supported)");
    b.setOrigin(n);
    GradContext ctx(b, n, gi->second, needs);
    std::vector<std::optional<ValueId>> inGrads;
    try {
      inGrads = (*d)(ctx);
    } catch (const ShapeError& e) {
      throw Error(describeNode(n) + ": derivative: " + e.message());
    }
    for (size_t i = 0; i < n.inputs.size() && i < inGrads.size(); ++i)
      if (needs[i] && inGrads[i]) accumulate(n.inputs[i], *inGrads[i]);
  }

  std::vector<ValueId> outputs = forward.outputs();
  for (ValueId t : targets) {
    auto it = grads.find(t);
    ValueId grad;
    if (it != grads.end()) {
      grad = it->second;
    } else {  // no path from this primal to an output: its gradient is zero
      b.setOrigin("", {}, {});
      grad = b.emit("full", {}, {{"shape", g.type(t).shape}, {"value", 0.0}, {"dtype", std::string(dtypeName(g.type(t).dtype))}});
    }
    if (g.value(grad).producer != kNoId && g.hasDefaultName(grad)) g.nameValue(grad, "grad_" + g.value(t).name);
    outputs.push_back(grad);
    jg.gradOf.push_back(t);
  }
  g.setOutputs(outputs);
  g = eliminateCommonSubexpressions(eliminateDeadCode(g));
  verifyGraph(g, torchOpTyper());
  return jg;
}

}  // namespace fusebox

// The module scope of an ONNX node, as the PyTorch exporters record it: the dynamo exporter's
// `pkg.torch.onnx.name_scopes` metadata ("['', 'layer2', 'layer2.0', 'layer2.0.conv1', 'conv2d']":
// the innermost module is the entry before the node's own name), or else the
// TorchScript exporter's node name, "/layer2/layer2.0/conv1/Conv" -> "layer2.0.conv1" (the last
// component is the op; "layer2.0" under "layer2" is that child's full path). The text comes from an untrusted file: only [A-Za-z0-9_.-] is kept
// (anything else becomes '_') and at most kMaxScopeLength characters, so a scope is safe in every
// printer (dot, HTML, generated-code comments).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace fusebox {

constexpr size_t kMaxScopeLength = 256;

// `metadata`: the node's metadata_props as (key, value) pairs.
std::string onnxNodeScope(const std::string& nodeName, const std::vector<std::pair<std::string, std::string>>& metadata);

// Where an initializer is read: the reading node's scope, op type and input slot.
struct OnnxParamUse {
  std::string scope, op;
  int slot = 0;
};

// The module-path name of a parameter the exporter named itself ("onnx::Conv_208", what the
// TorchScript exporter calls a weight it folded a BatchNorm into): its reader's scope and the
// role of the slot, "layer2.0.conv1.weight", as PyTorch names the parameter. Empty when it cannot
// be named so: no scope, or readers in different scopes or roles.
std::string moduleParamName(const std::vector<OnnxParamUse>& uses);

// Whether an initializer's name is one the exporter made up rather than a module path.
bool isGeneratedParamName(const std::string& name);

}  // namespace fusebox

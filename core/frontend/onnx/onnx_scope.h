// The module scope of an ONNX node, as the PyTorch exporters record it: the dynamo exporter's
// `pkg.torch.onnx.name_scopes` metadata ("['', 'layer2', 'layer2.0', 'layer2.0.conv1', 'conv2d']":
// the innermost module is the entry before the node's own name), or else the
// TorchScript exporter's node name, "/layer2/layer2.0/conv1/Conv" -> "layer2.layer2.0.conv1" (the
// last component is the op). The text comes from an untrusted file: only [A-Za-z0-9_.-] is kept
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

}  // namespace fusebox

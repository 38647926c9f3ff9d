// ONNX import: a .onnx model becomes a traced graph of registry ops. Initializers become params
// (their values in the params' InitSpec, so makeInputs gives them), graph inputs that are not
// initializers become inputs.
// Each ONNX node maps onto registry ops by op type and opset (onnx_ops.cpp); an op or attribute
// Fusebox does not support is an error naming the node, its op type and the opset. Errors carry
// the file and the node's position as "model.onnx:node N".
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/interp/tensor.h"
#include "core/ir/graph.h"

namespace fusebox {

struct OnnxModel {
  Graph graph;                          // graph inputs in order: model inputs, then initializers (params)
  std::vector<std::string> inputNames;  // the model inputs (not initializers), in order
  int64_t opset = 0;                    // the default domain's opset version
};

// Whether this build reads ONNX (libonnx / protobuf).
bool onnxAvailable();

OnnxModel loadOnnx(const std::string& path);
// A serialized onnx.TensorProto (a test case's input_0.pb / output_0.pb) as a Tensor.
Tensor loadOnnxTensor(const std::string& path);

}  // namespace fusebox

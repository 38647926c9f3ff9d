// ONNX import: a .onnx model becomes a traced graph of registry ops. Initializers become params
// (their values in the params' InitSpec, so makeInputs gives them), graph inputs that are not
// initializers become inputs.
// Each ONNX node maps onto registry ops by op type and opset (onnx_ops.cpp); an op or attribute
// Fusebox does not support is an error naming the node, its op type and the opset. Errors carry
// the file and the node's position as "model.onnx:node N".
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/interp/tensor.h"
#include "core/ir/graph.h"

namespace fusebox {

struct OnnxModel {
  Graph graph;                          // graph inputs in order: model inputs, then initializers (params)
  std::vector<std::string> inputNames;  // the model's declared inputs (not initializers), in order, bound ones included
  int64_t opset = 0;                    // the default domain's opset version
};

// Model inputs bound to values at import: they become constants, so inputs that decide shapes
// (a Reshape's shape, a Pad's pads, a Trilu's k) specialize the graph to those values, as
// torch.compile specializes on integer inputs. A bound model is only valid for those values.
using OnnxBindings = std::map<std::string, Tensor>;

OnnxModel loadOnnx(const std::string& path, const OnnxBindings& bind = {});

// A model input whose values an op needs at import (a Reshape's shape, Resize's scales, OneHot's
// depth) but that the model feeds at run time: it imports only with `input` bound (loadOnnx's
// bindings), specialized to those values as torch.compile specializes on ints.
class OnnxInputNeededAtImport : public Error {
public:
  OnnxInputNeededAtImport(const std::string& message, std::string inputName) : Error(message), input(std::move(inputName)) {}
  std::string input;
};
// The model's declared inputs that are not initializers, in order (what input_K.pb files feed).
std::vector<std::string> onnxInputNames(const std::string& path);
// A serialized onnx.TensorProto (a test case's input_0.pb / output_0.pb) as a Tensor. `declared`,
// the graph's type for it: ONNX's test data stores f16/bf16 values as UINT16 bit patterns, read
// as such when the graph declares f16/bf16.
Tensor loadOnnxTensor(const std::string& path, std::optional<DType> declared = std::nullopt);

}  // namespace fusebox

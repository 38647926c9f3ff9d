// The mapping of ONNX nodes onto registry ops (opset-aware), used by the ONNX loader.
#pragma once

#include <map>
#include <stdexcept>
#include <string>

#include "core/interp/tensor.h"
#include "core/ir/graph.h"
#include "core/ops/graph_builder.h"

namespace onnx {
class NodeProto;
class TensorProto;
}

namespace fusebox {

// An op, attribute or input form that Fusebox does not import (the loader adds node and opset).
class OnnxUnsupported : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct OnnxContext {
  Graph& graph;
  GraphBuilder builder;
  std::map<std::string, ValueId> values;     // ONNX value name -> graph value
  std::map<std::string, Tensor> constants;   // initializers and Constant outputs not yet used as data
  int64_t opset = 0;
  std::string file;
  std::map<std::string, Tensor> paramValues;  // constants that became params (graph inputs)

  // The graph value of an ONNX name; a constant becomes a param input the first time it is used.
  ValueId value(const std::string& name);
  // The value of a constant input (a Reshape shape, Slice starts, ...), or OnnxUnsupported.
  const Tensor& constant(const std::string& name, const char* what);
};

void importNode(OnnxContext& cx, const onnx::NodeProto& n);
// An onnx.TensorProto's values (raw or typed fields; f32/f64/i64/i32/bool/f16/bf16).
Tensor onnxTensorOf(const onnx::TensorProto& t, const std::string& where);

}  // namespace fusebox

// Small ONNX models built in tests: proto structs (core/frontend/onnx/onnx_proto.h) written by
// Fusebox's own wire-format writer.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "core/frontend/onnx/onnx_proto.h"

namespace fusebox::test {

// An ir-8 model importing the default domain at `opset`.
inline proto::ModelProto onnxModel(int64_t opset = 17) {
  proto::ModelProto m;
  m.irVersion = 8;
  m.opsetImports.push_back({"", opset});
  return m;
}

inline proto::ValueInfoProto onnxTensorInfo(const std::string& name, int32_t elemType, const std::vector<int64_t>& dims) {
  proto::ValueInfoProto v{name, true, elemType, {}};
  for (int64_t d : dims) v.dims.push_back({true, d, ""});
  return v;
}

// A value named only (a graph output whose type the importer infers).
inline proto::ValueInfoProto onnxName(const std::string& name) { return proto::ValueInfoProto{name, false, proto::UNDEFINED, {}}; }

inline proto::TensorProto onnxFloats(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values) {
  proto::TensorProto t;
  t.name = name;
  t.dataType = proto::FLOAT;
  t.dims = dims;
  t.floatData = values;
  return t;
}

inline proto::NodeProto& addOnnxNode(proto::GraphProto& g, const std::string& op, const std::vector<std::string>& inputs,
                                     const std::vector<std::string>& outputs, const std::string& name = "") {
  proto::NodeProto& n = g.nodes.emplace_back();
  n.opType = op;
  n.name = name;
  n.inputs = inputs;
  n.outputs = outputs;
  return n;
}

inline proto::AttributeProto onnxIntAttr(const std::string& name, int64_t v) {
  proto::AttributeProto a;
  a.name = name;
  a.type = proto::ATTR_INT;
  a.i = v;
  return a;
}

inline proto::AttributeProto onnxTensorAttr(const std::string& name, proto::TensorProto t) {
  proto::AttributeProto a;
  a.name = name;
  a.type = proto::ATTR_TENSOR;
  a.t = std::move(t);
  return a;
}

inline void writeOnnx(const std::string& path, const proto::ModelProto& m) { std::ofstream(path, std::ios::binary) << proto::serialize(m); }

}  // namespace fusebox::test

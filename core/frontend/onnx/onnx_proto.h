// The parts of ONNX's protobuf schema (onnx/onnx.proto) that Fusebox reads, as value types, with
// a reader and a writer of protobuf's wire format of our own. Fusebox needs no protobuf or libonnx
// library: a build on a machine without them (the GPU machines) imports ONNX as any other does,
// and a hostile file meets limits we set (nesting depth, lengths checked against the bytes left,
// wire types checked per field) with errors that give the byte offset and the field.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fusebox::proto {

// TensorProto.DataType.
enum DataType : int32_t {
  UNDEFINED = 0, FLOAT = 1, UINT8 = 2, INT8 = 3, UINT16 = 4, INT16 = 5, INT32 = 6, INT64 = 7, STRING = 8, BOOL = 9,
  FLOAT16 = 10, DOUBLE = 11, UINT32 = 12, UINT64 = 13, COMPLEX64 = 14, COMPLEX128 = 15, BFLOAT16 = 16,
  FLOAT8E4M3FN = 17, FLOAT8E4M3FNUZ = 18, FLOAT8E5M2 = 19, FLOAT8E5M2FNUZ = 20, UINT4 = 21, INT4 = 22, FLOAT4E2M1 = 23,
};
// "FLOAT16", or "unknown" for a number outside the enum.
const char* dataTypeName(int32_t type);

// AttributeProto.AttributeType.
enum AttributeType : int32_t {
  ATTR_UNDEFINED = 0, ATTR_FLOAT = 1, ATTR_INT = 2, ATTR_STRING = 3, ATTR_TENSOR = 4, ATTR_GRAPH = 5, ATTR_FLOATS = 6,
  ATTR_INTS = 7, ATTR_STRINGS = 8, ATTR_TENSORS = 9, ATTR_GRAPHS = 10, ATTR_SPARSE_TENSOR = 11, ATTR_SPARSE_TENSORS = 12,
  ATTR_TYPE_PROTO = 13, ATTR_TYPE_PROTOS = 14,
};

enum DataLocation : int32_t { DEFAULT = 0, EXTERNAL = 1 };

struct TensorProto {
  std::vector<int64_t> dims;
  int32_t dataType = UNDEFINED;
  std::string name;
  // The values: raw little-endian bytes, or one of the typed lists (16-bit floats as int32Data).
  std::string rawData;
  std::vector<float> floatData;
  std::vector<int32_t> int32Data;
  std::vector<int64_t> int64Data;
  std::vector<double> doubleData;
  std::vector<uint64_t> uint64Data;
  int32_t dataLocation = DEFAULT;
};

struct GraphProto;

struct AttributeProto {
  std::string name;
  int32_t type = ATTR_UNDEFINED;
  float f = 0;
  int64_t i = 0;
  std::string s;
  TensorProto t;
  std::shared_ptr<GraphProto> g;  // a subgraph (If, Loop, Scan): only its presence is read
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<GraphProto> graphs;
};

struct NodeProto {
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::string name;
  std::string opType;
  std::string domain;
  std::vector<AttributeProto> attributes;
  // metadata_props (ONNX 1.16): the dynamo exporter's module scopes ("pkg.torch.onnx.name_scopes").
  std::vector<std::pair<std::string, std::string>> metadata;
};

// A tensor type: elem_type and the shape's dims (a dim is a value, a parameter name, or neither).
struct Dimension {
  bool hasValue = false;
  int64_t value = 0;
  std::string param;
};
struct ValueInfoProto {
  std::string name;
  bool isTensor = false;  // TypeProto holds a tensor_type (not a sequence, map or optional)
  int32_t elemType = UNDEFINED;
  std::vector<Dimension> dims;
};

struct GraphProto {
  std::string name;
  std::vector<NodeProto> nodes;
  std::vector<TensorProto> initializers;
  int64_t sparseInitializers = 0;  // counted only: none import
  std::vector<ValueInfoProto> inputs;
  std::vector<ValueInfoProto> outputs;
  std::vector<ValueInfoProto> valueInfo;
};

struct OperatorSetId {
  std::string domain;
  int64_t version = 0;
};

struct ModelProto {
  int64_t irVersion = 0;
  std::vector<OperatorSetId> opsetImports;
  std::string producerName;
  GraphProto graph;
};

// A file that is not the wire format of the message: `offset` is the byte it failed at.
class ProtoError : public std::runtime_error {
public:
  ProtoError(const std::string& message, size_t offset) : std::runtime_error(message), offset(offset) {}
  size_t offset;
};

// Subgraphs nest at most this deep (protobuf's own default recursion limit is 100).
constexpr int kMaxNesting = 64;

ModelProto parseModel(std::string_view bytes);
TensorProto parseTensor(std::string_view bytes);

// The wire format of a message (tests and tools write models with these).
std::string serialize(const ModelProto& m);
std::string serialize(const TensorProto& t);

}  // namespace fusebox::proto

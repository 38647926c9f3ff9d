#include "core/frontend/onnx/onnx_loader.h"

#include "core/frontend/onnx/onnx_scope.h"
#include "core/ir/element_storage.h"

#ifdef FUSEBOX_HAVE_ONNX

#include <google/protobuf/unknown_field_set.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "core/frontend/model_file.h"
#include "core/frontend/onnx/onnx_ops.h"
#include "core/ir/error.h"
#include "core/ir/memory_budget.h"
#include "core/ops/graph_builder.h"

namespace fusebox {

bool onnxAvailable() { return true; }

namespace {

std::string readFile(const std::string& path) { return readModelFile(path); }  // regular files only, size-limited

template <class T>
void appendRaw(const std::string& raw, std::vector<double>& out) {
  size_t n = raw.size() / sizeof(T);
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
    out.push_back(static_cast<double>(v));
  }
}

}  // namespace

DType onnxDType(int onnxType, const std::string& where) {
  switch (onnxType) {
    case onnx::TensorProto::FLOAT: return DType::F32;
    case onnx::TensorProto::DOUBLE: return DType::F64;
    case onnx::TensorProto::INT64: case onnx::TensorProto::UINT32: case onnx::TensorProto::UINT64: return DType::I64;
    case onnx::TensorProto::INT32: case onnx::TensorProto::INT16: case onnx::TensorProto::UINT16: case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8: return DType::I32;
    case onnx::TensorProto::BOOL: return DType::Bool;
    case onnx::TensorProto::FLOAT16: return DType::F16;
    case onnx::TensorProto::BFLOAT16: return DType::BF16;
    default: throw Error(where + ": ONNX element type " + std::to_string(onnxType) + " (" + onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(onnxType)) + ") is not supported");
  }
}

Tensor onnxTensorOf(const onnx::TensorProto& t, const std::string& where) {
  DType dt = onnxDType(t.data_type(), where);
  std::vector<int64_t> sizes(t.dims().begin(), t.dims().end());
  std::optional<int64_t> n = numelWithin(sizes, kMaxImportedElements);  // a corrupt file may claim any dims
  if (!n) throw Error(where + ": tensor '" + t.name() + "' has dims that are negative or too large");
  // held as doubles: up to 8 times the bytes the file stores for a narrow type
  checkMemory(bytesOf(*n, sizeof(double)), where + ": tensor '" + t.name() + "'", TensorType{dt, shapeOf(sizes)}.str() + " at import");
  if (t.data_location() == onnx::TensorProto::EXTERNAL) throw Error(where + ": tensors stored in external files are not supported");
  std::vector<double> v;
  const std::string& raw = t.raw_data();
  if (!raw.empty()) {
    switch (t.data_type()) {
      case onnx::TensorProto::FLOAT: appendRaw<float>(raw, v); break;
      case onnx::TensorProto::DOUBLE: appendRaw<double>(raw, v); break;
      case onnx::TensorProto::INT64: appendRaw<int64_t>(raw, v); break;
      case onnx::TensorProto::INT32: appendRaw<int32_t>(raw, v); break;
      case onnx::TensorProto::BOOL: case onnx::TensorProto::UINT8: appendRaw<uint8_t>(raw, v); break;
      case onnx::TensorProto::INT8: appendRaw<int8_t>(raw, v); break;
      case onnx::TensorProto::INT16: appendRaw<int16_t>(raw, v); break;
      case onnx::TensorProto::UINT16: appendRaw<uint16_t>(raw, v); break;
      case onnx::TensorProto::UINT32: appendRaw<uint32_t>(raw, v); break;
      case onnx::TensorProto::UINT64: appendRaw<uint64_t>(raw, v); break;
      default: {
        std::vector<double> halves;
        appendRaw<uint16_t>(raw, halves);
        for (double h : halves) v.push_back(fromHalfBits(static_cast<uint16_t>(h), t.data_type() == onnx::TensorProto::BFLOAT16 ? DType::BF16 : DType::F16));
      }
    }
  } else {
    for (float x : t.float_data()) v.push_back(x);
    for (double x : t.double_data()) v.push_back(x);
    for (int64_t x : t.int64_data()) v.push_back(static_cast<double>(x));
    for (uint64_t x : t.uint64_data()) v.push_back(static_cast<double>(x));
    if (t.data_type() == onnx::TensorProto::FLOAT16 || t.data_type() == onnx::TensorProto::BFLOAT16)
      for (int32_t x : t.int32_data()) v.push_back(fromHalfBits(static_cast<uint16_t>(x), t.data_type() == onnx::TensorProto::BFLOAT16 ? DType::BF16 : DType::F16));
    else
      for (int32_t x : t.int32_data()) v.push_back(x);
  }
  if (static_cast<int64_t>(v.size()) != *n)
    throw Error(where + ": tensor '" + t.name() + "' has " + std::to_string(v.size()) + " values for shape of " + std::to_string(*n));
  return Tensor(dt, sizes, std::move(v));
}

namespace {

TensorType typeOf(const onnx::ValueInfoProto& vi, const std::string& where) {
  if (!vi.type().has_tensor_type()) throw Error(where + ": input '" + vi.name() + "' is not a tensor (sequences and optionals are not supported)");
  const auto& tt = vi.type().tensor_type();
  TensorType t;
  t.dtype = onnxDType(tt.elem_type(), where + ": input '" + vi.name() + "'");
  for (const auto& d : tt.shape().dim()) {
    if (!d.has_dim_value())
      throw Error(where + ": input '" + vi.name() + "' has a symbolic dim '" + d.dim_param() + "'; symbolic shapes are not supported");
    if (d.dim_value() > kMaxImportedElements) throw Error(where + ": input '" + vi.name() + "' has a dim of " + std::to_string(d.dim_value()) + ", too large");
    if (d.dim_value() == 0 && isInteger(t.dtype))  // an empty list of axes or indices: a value to specialize on
      throw OnnxInputNeededAtImport(where + ": input '" + vi.name() + "' is an empty integer tensor; it imports only bound to its value",
                                    vi.name());
    if (d.dim_value() < 0) throw Error(where + ": input '" + vi.name() + "' has a negative dim " + std::to_string(d.dim_value()));
    t.shape.push_back(Dim(d.dim_value()));
  }
  if (!numelWithin(concreteSizes(t.shape), kMaxImportedElements))
    throw Error(where + ": input '" + vi.name() + "' of shape " + shapeStr(t.shape) + " has more than 2^31 elements");
  return t;
}

}  // namespace

Tensor loadOnnxTensor(const std::string& path, std::optional<DType> declared) {
  onnx::TensorProto t;
  std::string bytes = readFile(path);
  if (!t.ParseFromString(bytes)) throw Error(path + ": not a serialized ONNX TensorProto");
  if (t.data_type() == onnx::TensorProto::UINT16 && (declared == DType::F16 || declared == DType::BF16))
    t.set_data_type(declared == DType::F16 ? onnx::TensorProto::FLOAT16 : onnx::TensorProto::BFLOAT16);
  return onnxTensorOf(t, path);
}

namespace {

onnx::ModelProto parseModelProto(const std::string& path) {
  onnx::ModelProto m;
  std::string bytes = readFile(path);
  if (bytes.empty() || !m.ParseFromString(bytes)) throw Error(path + ": not a valid ONNX model (protobuf parse failed)");
  return m;
}

}  // namespace

std::vector<std::string> onnxInputNames(const std::string& path) {
  onnx::ModelProto m = parseModelProto(path);
  std::set<std::string> inits;
  for (const auto& init : m.graph().initializer()) inits.insert(init.name());
  std::vector<std::string> names;
  for (const auto& in : m.graph().input())
    if (!inits.count(in.name())) names.push_back(in.name());
  return names;
}

namespace {

// NodeProto.metadata_props (field 9, ONNX 1.16) is newer than Debian 12's onnx headers: it is read
// from the unknown fields protobuf keeps; an entry that does not parse is skipped.
std::vector<std::pair<std::string, std::string>> nodeMetadata(const onnx::NodeProto& n) {
  constexpr int kMetadataProps = 9;
  std::vector<std::pair<std::string, std::string>> out;
  const google::protobuf::UnknownFieldSet& unknown = n.unknown_fields();
  for (int i = 0; i < unknown.field_count() && out.size() < 64; ++i) {
    const google::protobuf::UnknownField& f = unknown.field(i);
    if (f.number() != kMetadataProps || f.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED) continue;
    onnx::StringStringEntryProto e;
    if (e.ParseFromString(f.length_delimited())) out.emplace_back(e.key(), e.value());
  }
  return out;
}

// Renames the initializers the exporter named itself ("onnx::Conv_208") by the module path of
// their reader ("layer2.0.conv1.weight"), in the graph's initializers, inputs, outputs and nodes.
// The TorchScript exporter stores equal initializers once and fans them out through Identity
// nodes; an Identity's output is named by its own reader, and Identity readers do not count. A
// graph with subgraphs (If, Loop) is left as it is: their bodies may refer to the old names.
void nameParamsByModule(onnx::GraphProto& g) {
  for (const auto& n : g.node())
    for (const auto& a : n.attribute())
      if (a.has_g() || a.graphs_size() > 0) return;
  std::map<std::string, std::vector<OnnxParamUse>> uses;  // the names to rename, with their readers
  std::set<std::string> taken;
  for (const auto& init : g.initializer())
    if (isGeneratedParamName(init.name())) uses[init.name()];
  for (const auto& in : g.input()) taken.insert(in.name());
  for (const auto& init : g.initializer()) taken.insert(init.name());
  std::set<std::string> constant;  // initializers and Identity copies of them
  for (const auto& init : g.initializer()) constant.insert(init.name());
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) taken.insert(o);
    if (n.op_type() == "Identity" && n.input_size() == 1 && n.output_size() == 1 && constant.count(n.input(0))) {
      constant.insert(n.output(0));
      if (isGeneratedParamName(n.output(0))) uses[n.output(0)];
      continue;
    }
    std::string scope = onnxNodeScope(n.name(), nodeMetadata(n));
    for (int slot = 0; slot < n.input_size(); ++slot)
      if (auto it = uses.find(n.input(slot)); it != uses.end()) it->second.push_back({scope, n.op_type(), slot});
  }
  std::map<std::string, std::string> rename;
  for (const auto& [old, u] : uses) {
    std::string name = moduleParamName(u);
    if (name.empty()) continue;
    std::string unique = name;
    for (int k = 2; taken.count(unique); ++k) unique = name + "_" + std::to_string(k);
    taken.insert(unique);
    rename[old] = unique;
  }
  if (rename.empty()) return;
  auto apply = [&](std::string* s) {
    if (auto it = rename.find(*s); it != rename.end()) *s = it->second;
  };
  for (auto& init : *g.mutable_initializer()) apply(init.mutable_name());
  for (auto& in : *g.mutable_input()) apply(in.mutable_name());
  for (auto& out : *g.mutable_output()) apply(out.mutable_name());
  for (auto& info : *g.mutable_value_info()) apply(info.mutable_name());
  for (auto& n : *g.mutable_node()) {
    for (auto& in : *n.mutable_input()) apply(&in);
    for (auto& out : *n.mutable_output()) apply(&out);
  }
}

}  // namespace

OnnxModel loadOnnx(const std::string& path, const OnnxBindings& bind) {
  onnx::ModelProto m = parseModelProto(path);
  // Scalars the exporters lifted into initializers (the dynamo exporter's val_N: an epsilon, Pow's
  // exponent 2, a mask's fill value; the TorchScript exporter's onnx::*) are constants, not weights:
  // training them gave each a noise gradient. A real 0-d parameter (CLIP's logit_scale) keeps the
  // name its module gave it. Decided on the exporter's names, before nameParamsByModule renames.
  std::vector<bool> liftedScalar;
  for (const auto& init : m.graph().initializer()) {
    const std::string& n = init.name();
    bool generated = n.rfind("onnx::", 0) == 0 ||
                     (n.size() > 4 && n.rfind("val_", 0) == 0 && std::all_of(n.begin() + 4, n.end(), [](char c) { return c >= '0' && c <= '9'; }));
    liftedScalar.push_back(init.dims_size() == 0 && generated);
  }
  nameParamsByModule(*m.mutable_graph());
  OnnxModel out;
  for (const auto& imp : m.opset_import())
    if (isDefaultOnnxDomain(imp.domain())) out.opset = imp.version();
  const onnx::GraphProto& g = m.graph();
  out.graph.name = g.name().empty() ? "onnx_model" : g.name();
  OnnxContext cx{out.graph, GraphBuilder(out.graph), {}, {}, out.opset, path};
  for (int i = 0; i < g.initializer_size(); ++i) {
    const onnx::TensorProto& init = g.initializer(i);
    cx.elemTypes[init.name()] = init.data_type();
    Tensor t = onnxTensorOf(init, path + ": initializer");
    try {
      if (isFloating(t.dtype) && !liftedScalar[i]) cx.weights.insert(init.name());
      cx.keepConstant(init.name(), std::move(t));
    } catch (const LimitError& e) {
      throw LimitError(path + ": initializer: " + e.message());
    }
  }
  for (const auto& in : g.input()) {
    if (cx.constants.count(in.name())) continue;
    out.inputNames.push_back(in.name());
    if (auto b = bind.find(in.name()); b != bind.end()) {
      cx.constants[in.name()] = b->second;
      continue;
    }
    cx.values[in.name()] = out.graph.addInput(in.name(), typeOf(in, path), InputRole::Input);
  }
  for (const auto& in : g.input())
    if (!cx.elemTypes.count(in.name())) cx.elemTypes[in.name()] = in.type().tensor_type().elem_type();
  // Each node output's node inputs: a value the import needs that was computed from a model
  // input (a window's size cast to float) names that input, which a specialized load binds.
  std::map<std::string, std::vector<std::string>> computedFrom;
  auto neededInput = [&](const std::string& value) -> std::optional<std::string> {
    std::vector<std::string> todo{value};
    std::set<std::string> seen;
    while (!todo.empty()) {
      std::string v = todo.back();
      todo.pop_back();
      if (!seen.insert(v).second) continue;
      if (std::find(out.inputNames.begin(), out.inputNames.end(), v) != out.inputNames.end() && !bind.count(v)) return v;
      if (auto it = computedFrom.find(v); it != computedFrom.end()) todo.insert(todo.end(), it->second.begin(), it->second.end());
    }
    return std::nullopt;
  };
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    for (const std::string& o : n.output()) computedFrom[o].assign(n.input().begin(), n.input().end());
    std::string where = path + ": node " + std::to_string(i) + (n.name().empty() ? "" : " '" + n.name() + "'") + " (" + n.op_type() +
                        ", opset " + std::to_string(out.opset) + ")";
    if (!isDefaultOnnxDomain(n.domain()) && n.domain() != kOnnxTrainingDomain)
      throw Error(where + ": ops of domain '" + n.domain() + "' are not supported");
    if (isDefaultOnnxDomain(n.domain()) && !out.opset)
      throw Error(path + ": the model uses default-domain (ai.onnx) ops but imports no opset of that domain");
    // "line" = the node's 1-based position; the scope is the module the exporter recorded.
    cx.builder.setOrigin(onnxNodeScope(n.name(), nodeMetadata(n)), {}, SourceLoc{path, i + 1, 1});
    try {
      importNode(cx, n);
    } catch (const OnnxNeedsConstant& e) {
      if (std::optional<std::string> input = neededInput(e.value)) throw OnnxInputNeededAtImport(where + ": " + e.what(), *input);
      throw Error(where + ": " + e.what());
    } catch (const OnnxUnsupported& e) {
      throw Error(where + ": " + e.what());
    } catch (const LimitError& e) {  // keeps its class: over the memory budget, not a malformed file
      throw LimitError(where + ": " + e.message());
    } catch (const Error& e) {
      throw Error(where + ": " + e.message());
    } catch (const std::exception& e) {  // a malformed node the checks above missed (std::out_of_range, ...)
      throw Error(where + ": malformed node (" + e.what() + ")");
    }
  }
  std::vector<ValueId> outs;
  for (const auto& o : g.output()) outs.push_back(cx.value(o.name()));
  out.graph.setOutputs(outs);
  return out;
}

}  // namespace fusebox

#else

#include "core/ir/error.h"

namespace fusebox {
bool onnxAvailable() { return false; }
OnnxModel loadOnnx(const std::string& path, const OnnxBindings&) {
  throw Error(path + ": this fusebox was built without ONNX support (install libonnx-dev and libprotobuf-dev, then reconfigure)");
}
std::vector<std::string> onnxInputNames(const std::string& path) {
  throw Error(path + ": this fusebox was built without ONNX support (install libonnx-dev and libprotobuf-dev, then reconfigure)");
}
Tensor loadOnnxTensor(const std::string& path, std::optional<DType>) {
  throw Error(path + ": this fusebox was built without ONNX support (install libonnx-dev and libprotobuf-dev, then reconfigure)");
}
}  // namespace fusebox

#endif

#include "core/frontend/onnx/onnx_loader.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "core/frontend/model_file.h"
#include "core/frontend/onnx/onnx_ops.h"
#include "core/frontend/onnx/onnx_proto.h"
#include "core/frontend/onnx/onnx_scope.h"
#include "core/ir/element_storage.h"
#include "core/ir/error.h"
#include "core/ir/memory_budget.h"
#include "core/ops/graph_builder.h"

namespace fusebox {

namespace {

std::string readFile(const std::string& path) { return readModelFile(path); }  // regular files only, size-limited

template <class T>
void appendRaw(const std::string& raw, std::vector<double>& out) {
  size_t n = raw.size() / sizeof(T), at = out.size();
  out.resize(at + n);  // one allocation: GPT-2's 124 M weights are 500 MB of raw data
  double* dst = out.data() + at;
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
    dst[i] = static_cast<double>(v);
  }
}

}  // namespace

DType onnxDType(int onnxType, const std::string& where) {
  switch (onnxType) {
    case proto::FLOAT: return DType::F32;
    case proto::DOUBLE: return DType::F64;
    case proto::INT64: case proto::UINT32: case proto::UINT64: return DType::I64;
    case proto::INT32: case proto::INT16: case proto::UINT16: case proto::INT8:
    case proto::UINT8: return DType::I32;
    case proto::BOOL: return DType::Bool;
    case proto::FLOAT16: return DType::F16;
    case proto::BFLOAT16: return DType::BF16;
    default: throw Error(where + ": ONNX element type " + std::to_string(onnxType) + " (" + proto::dataTypeName(onnxType) + ") is not supported");
  }
}

Tensor onnxTensorOf(const proto::TensorProto& t, const std::string& where) {
  DType dt = onnxDType(t.dataType, where);
  std::vector<int64_t> sizes(t.dims.begin(), t.dims.end());
  std::optional<int64_t> n = numelWithin(sizes, kMaxImportedElements);  // a corrupt file may claim any dims
  if (!n) throw Error(where + ": tensor '" + t.name + "' has dims that are negative or too large");
  // held as doubles: up to 8 times the bytes the file stores for a narrow type
  checkMemory(bytesOf(*n, sizeof(double)), where + ": tensor '" + t.name + "'", TensorType{dt, shapeOf(sizes)}.str() + " at import");
  if (t.dataLocation == proto::EXTERNAL) throw Error(where + ": tensors stored in external files are not supported");
  std::vector<double> v;
  const std::string& raw = t.rawData;
  if (!raw.empty()) {
    switch (t.dataType) {
      case proto::FLOAT: appendRaw<float>(raw, v); break;
      case proto::DOUBLE: appendRaw<double>(raw, v); break;
      case proto::INT64: appendRaw<int64_t>(raw, v); break;
      case proto::INT32: appendRaw<int32_t>(raw, v); break;
      case proto::BOOL: case proto::UINT8: appendRaw<uint8_t>(raw, v); break;
      case proto::INT8: appendRaw<int8_t>(raw, v); break;
      case proto::INT16: appendRaw<int16_t>(raw, v); break;
      case proto::UINT16: appendRaw<uint16_t>(raw, v); break;
      case proto::UINT32: appendRaw<uint32_t>(raw, v); break;
      case proto::UINT64: appendRaw<uint64_t>(raw, v); break;
      default: {
        std::vector<double> halves;
        appendRaw<uint16_t>(raw, halves);
        for (double h : halves) v.push_back(fromHalfBits(static_cast<uint16_t>(h), t.dataType == proto::BFLOAT16 ? DType::BF16 : DType::F16));
      }
    }
  } else {
    for (float x : t.floatData) v.push_back(x);
    for (double x : t.doubleData) v.push_back(x);
    for (int64_t x : t.int64Data) v.push_back(static_cast<double>(x));
    for (uint64_t x : t.uint64Data) v.push_back(static_cast<double>(x));
    if (t.dataType == proto::FLOAT16 || t.dataType == proto::BFLOAT16)
      for (int32_t x : t.int32Data) v.push_back(fromHalfBits(static_cast<uint16_t>(x), t.dataType == proto::BFLOAT16 ? DType::BF16 : DType::F16));
    else
      for (int32_t x : t.int32Data) v.push_back(x);
  }
  if (static_cast<int64_t>(v.size()) != *n)
    throw Error(where + ": tensor '" + t.name + "' has " + std::to_string(v.size()) + " values for shape of " + std::to_string(*n));
  return Tensor(dt, sizes, std::move(v));
}

namespace {

TensorType typeOf(const proto::ValueInfoProto& vi, const std::string& where) {
  if (!vi.isTensor) throw Error(where + ": input '" + vi.name + "' is not a tensor (sequences and optionals are not supported)");
  TensorType t;
  t.dtype = onnxDType(vi.elemType, where + ": input '" + vi.name + "'");
  for (const proto::Dimension& d : vi.dims) {
    if (!d.hasValue)
      throw Error(where + ": input '" + vi.name + "' has a symbolic dim '" + d.param + "'; symbolic shapes are not supported");
    if (d.value > kMaxImportedElements) throw Error(where + ": input '" + vi.name + "' has a dim of " + std::to_string(d.value) + ", too large");
    if (d.value == 0 && isInteger(t.dtype))  // an empty list of axes or indices: a value to specialize on
      throw OnnxInputNeededAtImport(where + ": input '" + vi.name + "' is an empty integer tensor; it imports only bound to its value", vi.name);
    if (d.value < 0) throw Error(where + ": input '" + vi.name + "' has a negative dim " + std::to_string(d.value));
    t.shape.push_back(Dim(d.value));
  }
  if (!numelWithin(concreteSizes(t.shape), kMaxImportedElements))
    throw Error(where + ": input '" + vi.name + "' of shape " + shapeStr(t.shape) + " has more than 2^31 elements");
  return t;
}

}  // namespace

Tensor loadOnnxTensor(const std::string& path, std::optional<DType> declared) {
  proto::TensorProto t;
  try {
    t = proto::parseTensor(readFile(path));
  } catch (const proto::ProtoError& e) {
    throw Error(path + ": not a serialized ONNX TensorProto (byte " + std::to_string(e.offset) + ": " + e.what() + ")");
  }
  if (t.dataType == proto::UINT16 && (declared == DType::F16 || declared == DType::BF16))
    t.dataType = declared == DType::F16 ? proto::FLOAT16 : proto::BFLOAT16;
  return onnxTensorOf(t, path);
}

namespace {

proto::ModelProto parseModelProto(const std::string& path) {
  std::string bytes = readFile(path);
  if (bytes.empty()) throw Error(path + ": not a valid ONNX model (the file is empty)");
  try {
    return proto::parseModel(bytes);
  } catch (const proto::ProtoError& e) {
    throw Error(path + ": not a valid ONNX model (byte " + std::to_string(e.offset) + ": " + e.what() + ")");
  }
}

}  // namespace

std::vector<std::string> onnxInputNames(const std::string& path) {
  proto::ModelProto m = parseModelProto(path);
  std::set<std::string> inits;
  for (const auto& init : m.graph.initializers) inits.insert(init.name);
  std::vector<std::string> names;
  for (const auto& in : m.graph.inputs)
    if (!inits.count(in.name)) names.push_back(in.name);
  return names;
}

namespace {

// A node's metadata_props for its scope: a hostile file's thousands of entries are cut at 64.
std::vector<std::pair<std::string, std::string>> nodeMetadata(const proto::NodeProto& n) {
  constexpr size_t kMaxEntries = 64;
  return {n.metadata.begin(), n.metadata.begin() + static_cast<std::ptrdiff_t>(std::min(n.metadata.size(), kMaxEntries))};
}

// Renames the initializers the exporter named itself ("onnx::Conv_208") by the module path of
// their reader ("layer2.0.conv1.weight"), in the graph's initializers, inputs, outputs and nodes.
// The TorchScript exporter stores equal initializers once and fans them out through Identity
// nodes; an Identity's output is named by its own reader, and Identity readers do not count. A
// graph with subgraphs (If, Loop) is left as it is: their bodies may refer to the old names.
void nameParamsByModule(proto::GraphProto& g) {
  for (const auto& n : g.nodes)
    for (const auto& a : n.attributes)
      if (a.g || !a.graphs.empty()) return;
  std::map<std::string, std::vector<OnnxParamUse>> uses;  // the names to rename, with their readers
  std::set<std::string> taken;
  for (const auto& init : g.initializers)
    if (isGeneratedParamName(init.name)) uses[init.name];
  for (const auto& in : g.inputs) taken.insert(in.name);
  for (const auto& init : g.initializers) taken.insert(init.name);
  std::set<std::string> constant;  // initializers and Identity copies of them
  for (const auto& init : g.initializers) constant.insert(init.name);
  for (const auto& n : g.nodes) {
    for (const auto& o : n.outputs) taken.insert(o);
    if (n.opType == "Identity" && n.inputs.size() == 1 && n.outputs.size() == 1 && constant.count(n.inputs[0])) {
      constant.insert(n.outputs[0]);
      if (isGeneratedParamName(n.outputs[0])) uses[n.outputs[0]];
      continue;
    }
    std::string scope = onnxNodeScope(n.name, nodeMetadata(n));
    for (size_t slot = 0; slot < n.inputs.size(); ++slot)
      if (auto it = uses.find(n.inputs[slot]); it != uses.end()) it->second.push_back({scope, n.opType, static_cast<int>(slot)});
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
  auto apply = [&](std::string& s) {
    if (auto it = rename.find(s); it != rename.end()) s = it->second;
  };
  for (auto& init : g.initializers) apply(init.name);
  for (auto* infos : {&g.inputs, &g.outputs, &g.valueInfo})
    for (auto& info : *infos) apply(info.name);
  for (auto& n : g.nodes) {
    for (auto& in : n.inputs) apply(in);
    for (auto& out : n.outputs) apply(out);
  }
}

}  // namespace

OnnxModel loadOnnx(const std::string& path, const OnnxBindings& bind) {
  proto::ModelProto m = parseModelProto(path);
  if (m.graph.sparseInitializers) throw Error(path + ": sparse initializers are not supported");
  // Scalars the exporters lifted into initializers (the dynamo exporter's val_N: an epsilon, Pow's
  // exponent 2, a mask's fill value; the TorchScript exporter's onnx::*) are constants, not weights:
  // training them gave each a noise gradient. A real 0-d parameter (CLIP's logit_scale) keeps the
  // name its module gave it. Decided on the exporter's names, before nameParamsByModule renames.
  std::vector<bool> liftedScalar;
  for (const auto& init : m.graph.initializers) {
    const std::string& n = init.name;
    bool generated = n.rfind("onnx::", 0) == 0 ||
                     (n.size() > 4 && n.rfind("val_", 0) == 0 && std::all_of(n.begin() + 4, n.end(), [](char c) { return c >= '0' && c <= '9'; }));
    liftedScalar.push_back(init.dims.empty() && generated);
  }
  nameParamsByModule(m.graph);
  OnnxModel out;
  for (const auto& imp : m.opsetImports)
    if (isDefaultOnnxDomain(imp.domain)) out.opset = imp.version;
  const proto::GraphProto& g = m.graph;
  out.graph.name = g.name.empty() ? "onnx_model" : g.name;
  OnnxContext cx{out.graph, GraphBuilder(out.graph), {}, {}, out.opset, path};
  for (size_t i = 0; i < g.initializers.size(); ++i) {
    const proto::TensorProto& init = g.initializers[i];
    cx.elemTypes[init.name] = init.dataType;
    Tensor t = onnxTensorOf(init, path + ": initializer");
    try {
      if (isFloating(t.dtype) && !liftedScalar[i]) cx.weights.insert(init.name);
      cx.keepConstant(init.name, std::move(t));
    } catch (const LimitError& e) {
      throw LimitError(path + ": initializer: " + e.message());
    }
  }
  for (const auto& in : g.inputs) {
    if (cx.constants.count(in.name)) continue;
    out.inputNames.push_back(in.name);
    if (auto b = bind.find(in.name); b != bind.end()) {
      cx.constants[in.name] = std::make_shared<const Tensor>(b->second);
      continue;
    }
    cx.values[in.name] = out.graph.addInput(in.name, typeOf(in, path), InputRole::Input);
  }
  for (const auto& in : g.inputs)
    if (!cx.elemTypes.count(in.name)) cx.elemTypes[in.name] = in.elemType;
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
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const proto::NodeProto& n = g.nodes[i];
    for (const std::string& o : n.outputs) computedFrom[o] = n.inputs;
    std::string where = path + ": node " + std::to_string(i) + (n.name.empty() ? "" : " '" + n.name + "'") + " (" + n.opType +
                        ", opset " + std::to_string(out.opset) + ")";
    if (!isDefaultOnnxDomain(n.domain) && n.domain != kOnnxTrainingDomain)
      throw Error(where + ": ops of domain '" + n.domain + "' are not supported");
    if (isDefaultOnnxDomain(n.domain) && !out.opset)
      throw Error(path + ": the model uses default-domain (ai.onnx) ops but imports no opset of that domain");
    // "line" = the node's 1-based position; the scope is the module the exporter recorded.
    cx.builder.setOrigin(onnxNodeScope(n.name, nodeMetadata(n)), {}, SourceLoc{path, static_cast<int>(i) + 1, 1});
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
  for (const auto& o : g.outputs) outs.push_back(cx.value(o.name));
  out.graph.setOutputs(outs);
  return out;
}

}  // namespace fusebox

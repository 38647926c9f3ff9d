#include "core/frontend/onnx/onnx_ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <set>

#include "core/interp/interpreter.h"
#include "core/ir/error.h"
#include "core/ir/memory_budget.h"

namespace fusebox {

namespace {

TensorType typeOfTensor(const Tensor& t) { return {t.dtype, shapeOf(t.sizes)}; }

}  // namespace

ValueId OnnxContext::value(const std::string& name) {
  if (auto it = values.find(name); it != values.end()) return it->second;
  auto c = constants.find(name);
  if (c == constants.end()) throw Error("input '" + name + "' is not produced by any earlier node, graph input or initializer");
  InitSpec init;
  init.kind = InitSpec::Kind::Values;
  init.values = std::shared_ptr<const std::vector<double>>(c->second, &c->second->data);  // aliases the constant
  ValueId v = graph.addInput(name, typeOfTensor(*c->second), InputRole::Param, init);
  if (!weights.count(name)) graph.markNotTrainable(v);
  values[name] = v;
  return v;
}

const Tensor& OnnxContext::constant(const std::string& name, const char* what) {
  auto c = constants.find(name);
  if (c == constants.end())
    throw OnnxNeedsConstant(std::string(what) + " computed at run time is not supported (it must be an initializer or a Constant)", name);
  return *c->second;
}

void OnnxContext::keepConstant(const std::string& name, Tensor t) {
  std::optional<int64_t> bytes = interpreterBytes(t.sizes);
  checkMemory(bytes, "constant '" + name + "'", typeOfTensor(t).str() + " at import", {}, constantBytes);
  constantBytes += *bytes;
  constants[name] = std::make_shared<const Tensor>(std::move(t));
}

ValueId OnnxContext::constantValue(Tensor t) {
  std::string name;
  do name = "onnx_const_" + std::to_string(madeConstants++);
  while (constants.count(name) || values.count(name));
  keepConstant(name, std::move(t));
  return value(name);
}

void OnnxContext::checkBuildable(const std::vector<int64_t>& sizes, const std::string& what) {
  if (!numelWithin(sizes, kMaxFoldedElements)) {
    std::string dims;
    for (int64_t d : sizes) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    throw OnnxUnsupported(what + " of [" + dims + "] is too large to build at import (limit 2^24 elements)");
  }
}

ValueId OnnxNode::in(int i) {
  if (!has(i)) throw OnnxUnsupported("input " + std::to_string(i) + " is required");
  return cx.value(n.inputs[i]);
}
bool OnnxNode::has(int i) const { return i < std::ssize(n.inputs) && !n.inputs[i].empty(); }

TensorType OnnxNode::inType(int i) const {
  if (!has(i)) throw OnnxUnsupported("input " + std::to_string(i) + " is required");
  if (auto c = cx.constants.find(n.inputs[i]); c != cx.constants.end()) return typeOfTensor(*c->second);
  return cx.graph.type(cx.value(n.inputs[i]));
}

const Tensor& OnnxNode::constantInput(int i, const char* what) {
  if (!has(i)) throw OnnxUnsupported(std::string(what) + " (input " + std::to_string(i) + ") is required");
  return cx.constant(n.inputs[i], what);
}

std::vector<int64_t> OnnxNode::intsInput(int i, const char* what) {
  // Saturating: exporters write "to the end" as INT64_MAX (a Slice's ends), which as a double is
  // 2^63, one past it; casting that back is undefined (it gave INT64_MIN: an empty slice).
  std::vector<int64_t> v;
  for (double x : constantInput(i, what).data) {
    if (std::isnan(x)) throw Error(std::string(what) + " holds NaN where integers are expected");
    v.push_back(x >= 0x1p63 ? std::numeric_limits<int64_t>::max() : x <= -0x1p63 ? std::numeric_limits<int64_t>::min() : static_cast<int64_t>(x));
  }
  return v;
}

std::vector<int64_t> OnnxNode::sizesOf(const Shape& s) {
  if (!isConcrete(s)) throw OnnxUnsupported("symbolic shapes are not imported");
  return concreteSizes(s);
}

int64_t OnnxNode::axis(int64_t a, size_t r) const {
  if (a < 0) a += static_cast<int64_t>(r);
  if (a < 0 || a >= static_cast<int64_t>(r)) throw OnnxUnsupported("axis out of range for a rank-" + std::to_string(r) + " input");
  return a;
}

const proto::AttributeProto* OnnxNode::attr(const char* name) const {
  for (const auto& a : n.attributes)
    if (a.name == name) return &a;
  return nullptr;
}
int64_t OnnxNode::attrInt(const char* name, int64_t fallback) const {
  const auto* a = attr(name);
  return a ? a->i : fallback;
}
double OnnxNode::attrFloat(const char* name, double fallback) const {
  const auto* a = attr(name);
  return a ? a->f : fallback;
}
std::vector<int64_t> OnnxNode::attrInts(const char* name, std::vector<int64_t> fallback) const {
  const auto* a = attr(name);
  return a ? std::vector<int64_t>(a->ints.begin(), a->ints.end()) : fallback;
}
std::string OnnxNode::attrString(const char* name, const std::string& fallback) const {
  const auto* a = attr(name);
  return a ? a->s : fallback;
}

// Every value the importer makes stays within kMaxImportedElements (sizes come from the file).
ValueId OnnxNode::emit(const std::string& op, std::vector<ValueId> ins, AttrMap a) {
  ValueId v = cx.builder.emit(op, ins, std::move(a));
  checkedNumel(sizes(v), "the result of " + op);
  return v;
}

int64_t checkedNumel(const std::vector<int64_t>& sizes, const std::string& what) {
  for (int64_t d : sizes)
    if (d < 0) throw Error(what + " has a negative dim");
  std::optional<int64_t> n = numelWithin(sizes, kMaxImportedElements);
  if (!n) throw Error(what + " has more than 2^31 elements");
  return *n;
}
ValueId OnnxNode::scalar(double v, DType t) { return cx.builder.scalar(v, t); }

ValueId OnnxNode::reshape(ValueId x, const std::vector<int64_t>& s) {
  if (checkedNumel(s, "the new shape") != checkedNumel(sizes(x), "the input"))
    throw Error("cannot reshape " + shapeStr(shape(x)) + " to " + std::to_string(s.size()) + " dims of another element count");
  Shape shape = shapeOf(s);
  if (shape == this->shape(x)) return x;
  return emit("reshape", {x}, {{"shape", shape}});
}

ValueId OnnxNode::cast(ValueId x, DType t) { return dtype(x) == t ? x : emit("to", {x}, {{"dtype", std::string(dtypeName(t))}}); }

ValueId OnnxNode::padDim(ValueId x, size_t dim, int64_t lo, int64_t hi, double value) {
  std::vector<int64_t> s = sizes(x);
  const int64_t d = static_cast<int64_t>(dim);
  if (lo < 0 || hi < 0)
    x = emit("slice", {x}, {{"dim", d}, {"start", std::max<int64_t>(-lo, 0)}, {"end", s[dim] - std::max<int64_t>(-hi, 0)}, {"step", int64_t{1}}});
  std::vector<ValueId> parts;
  auto fill = [&](int64_t count) {
    std::vector<int64_t> fs = sizes(x);
    fs[dim] = count;
    return emit("full", {}, {{"shape", shapeOf(fs)}, {"value", value}, {"dtype", std::string(dtypeName(dtype(x)))}});
  };
  if (lo > 0) parts.push_back(fill(lo));
  parts.push_back(x);
  if (hi > 0) parts.push_back(fill(hi));
  return parts.size() == 1 ? x : emit("cat", parts, {{"dim", d}});
}

ValueId OnnxNode::iota(int64_t count, size_t dim, size_t r, DType t) {
  OnnxContext::checkBuildable({count}, "an index table");
  std::vector<int64_t> s(r, 1);
  s[dim] = count;
  std::vector<double> v;
  for (int64_t i = 0; i < count; ++i) v.push_back(static_cast<double>(i));
  return cx.constantValue(Tensor(t, s, v));
}

namespace {

const OnnxImporters& importers() {
  static const OnnxImporters m = [] {
    OnnxImporters t;
    addMathImporters(t);
    addTensorImporters(t);
    addNnImporters(t);
    addRecurrentImporters(t);
    addResizeImporters(t);
    addWindowImporters(t);
    addIndexImporters(t);
    addEinsumImporters(t);
    addTrainingImporters(t);
    addQuantizationImporters(t);
    addSelectionImporters(t);
    addSpectralImporters(t);
    addGridSampleImporters(t);
    return t;
  }();
  return m;
}

// Ops whose outputs are known at import time from attributes, constant inputs or static shapes.
using ConstantMaker = std::function<Tensor(OnnxNode&)>;

Tensor constantNode(OnnxNode& c) {
  const auto* a = c.n.attributes.size() == 1 ? &c.n.attributes[0] : nullptr;
  if (!a) throw OnnxUnsupported("a Constant needs exactly one value attribute");
  const std::string& k = a->name;
  if (k == "value") return onnxTensorOf(a->t, c.cx.file + ": Constant");
  if (k == "value_float") return Tensor(DType::F32, {}, {a->f});
  if (k == "value_int") return Tensor(DType::I64, {}, {static_cast<double>(a->i)});
  if (k == "value_floats") return Tensor(DType::F32, {std::ssize(a->floats)}, std::vector<double>(a->floats.begin(), a->floats.end()));
  if (k == "value_ints") {
    std::vector<double> v(a->ints.begin(), a->ints.end());
    return Tensor(DType::I64, {static_cast<int64_t>(v.size())}, v);
  }
  throw OnnxUnsupported("Constant with attribute '" + k + "' is not supported");
}

// A generalized cosine window of `size` points (opset 17's Hann, Hamming and Blackman windows):
// a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size when periodic (the default), size - 1
// when symmetric.
Tensor onnxWindow(OnnxNode& c, std::array<double, 3> a) {
  std::vector<int64_t> size = c.intsInput(0, "the window size");
  if (size.size() != 1 || size[0] < 1) throw Error("a window's size must be one positive integer");
  OnnxContext::checkBuildable(size, c.n.opType);
  DType t = onnxDType(static_cast<int>(c.attrInt("output_datatype", 1)), c.n.opType);
  double n = static_cast<double>(size[0]), denom = c.attrInt("periodic", 1) ? n : n - 1;
  Tensor w(t, size);
  for (int64_t i = 0; i < size[0]; ++i) {
    double x = 2 * M_PI * static_cast<double>(i) / denom;
    w.data[static_cast<size_t>(i)] = roundToDType(denom == 0 ? 1.0 : a[0] - a[1] * std::cos(x) + a[2] * std::cos(2 * x), t);
  }
  return w;
}

const std::map<std::string, ConstantMaker>& constantMakers() {
  static const std::map<std::string, ConstantMaker> m = {
      {"Constant", constantNode},
      {"Shape",
       [](OnnxNode& c) {
         std::vector<int64_t> s = OnnxNode::sizesOf(c.inType(0).shape);
         int64_t r = static_cast<int64_t>(s.size());
         auto clampAxis = [r](int64_t a) { return std::clamp(a < 0 ? a + r : a, int64_t{0}, r); };
         int64_t start = clampAxis(c.attrInt("start", 0)), end = clampAxis(c.attrInt("end", r));
         std::vector<double> v;
         for (int64_t i = start; i < end; ++i) v.push_back(static_cast<double>(s[static_cast<size_t>(i)]));
         return Tensor(DType::I64, {static_cast<int64_t>(v.size())}, v);
       }},
      {"Size", [](OnnxNode& c) { return Tensor(DType::I64, {}, {static_cast<double>(numelOf(OnnxNode::sizesOf(c.inType(0).shape)))}); }},
      {"ConstantOfShape",
       [](OnnxNode& c) {
         std::vector<int64_t> s = c.intsInput(0, "the shape input");
         OnnxContext::checkBuildable(s, "ConstantOfShape");
         Tensor fill(DType::F32, {1}, {0.0});
         if (const auto* a = c.attr("value")) fill = onnxTensorOf(a->t, c.cx.file + ": ConstantOfShape value");
         if (fill.data.empty()) throw Error("ConstantOfShape's value is empty");
         return Tensor(fill.dtype, s, std::vector<double>(static_cast<size_t>(numelOf(s)), fill.data.at(0)));
       }},
      {"EyeLike",
       [](OnnxNode& c) {
         TensorType in = c.inType(0);
         std::vector<int64_t> s = OnnxNode::sizesOf(in.shape);
         if (s.size() != 2) throw OnnxUnsupported("EyeLike needs a 2-D input");
         OnnxContext::checkBuildable(s, "EyeLike");
         DType t = c.attr("dtype") ? onnxDType(static_cast<int>(c.attrInt("dtype", 1)), "EyeLike") : in.dtype;
         Tensor out(t, s);
         int64_t k = c.attrInt("k", 0);
         for (int64_t i = 0; i < s[0]; ++i)
           if (i + k >= 0 && i + k < s[1]) out.data[static_cast<size_t>(i * s[1] + i + k)] = 1;
         return out;
       }},
      {"HannWindow", [](OnnxNode& c) { return onnxWindow(c, {0.5, 0.5, 0}); }},
      {"HammingWindow", [](OnnxNode& c) { return onnxWindow(c, {25.0 / 46.0, 21.0 / 46.0, 0}); }},
      {"BlackmanWindow", [](OnnxNode& c) { return onnxWindow(c, {0.42, 0.5, 0.08}); }},
      {"Range",
       [](OnnxNode& c) {
         const Tensor& start = c.constantInput(0, "Range's start");
         double s = start.data.at(0), limit = c.constantInput(1, "Range's limit").data.at(0),
                d = c.constantInput(2, "Range's delta").data.at(0);
         if (d == 0 || !std::isfinite(s) || !std::isfinite(limit) || !std::isfinite(d)) throw Error("Range needs finite values and a nonzero delta");
         double steps = std::ceil((limit - s) / d);
         if (steps > static_cast<double>(kMaxFoldedElements)) throw OnnxUnsupported("a Range of more than 2^24 elements is not supported");
         int64_t count = std::max<int64_t>(static_cast<int64_t>(steps), 0);
         std::vector<double> v;
         for (int64_t i = 0; i < count; ++i) v.push_back(roundToDType(s + static_cast<double>(i) * d, start.dtype));
         return Tensor(start.dtype, {count}, v);
       }},
  };
  return m;
}

// Random ops must not be folded: each run draws new values. Nor may an op of a weight: folded,
// its result would be a constant that a training step does not differentiate (the TorchScript
// exporter without constant folding writes each Linear as Transpose(weight) -> MatMul, and
// GPT-2's position embedding as Gather(wpe, arange)). An Identity of a weight is folded: it is the
// TorchScript exporter's copy of an equal initializer, another parameter (importNode).
bool foldable(const proto::NodeProto& n, const OnnxContext& cx) {
  static const std::set<std::string> random = {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Bernoulli",
                                               "Multinomial", "Dropout"};
  if (random.count(n.opType) || n.inputs.empty()) return false;
  bool any = false;
  for (const auto& name : n.inputs) {
    if (name.empty()) continue;
    if (!cx.constants.count(name) || (cx.weights.count(name) && n.opType != "Identity")) return false;
    any = true;
  }
  return any;
}

// Imports the node into a scratch graph whose inputs are its constant inputs and runs the
// reference interpreter on it: the outputs become constants (a Reshape whose shape comes from
// Shape -> Gather -> Concat, say, then sees a constant shape).
bool fold(OnnxContext& cx, const proto::NodeProto& n, const OnnxImporter& importer) {
  Graph g;
  g.name = "onnx_fold";
  OnnxContext sub{g, GraphBuilder(g), {}, {}, cx.opset, cx.file};
  sub.builder.setOrigin("", {}, {});
  std::vector<Tensor> inputs;
  for (const auto& name : n.inputs) {
    if (name.empty() || sub.values.count(name)) continue;
    const Tensor& t = *cx.constants.at(name);
    sub.constants[name] = cx.constants.at(name);
    if (auto e = cx.elemTypes.find(name); e != cx.elemTypes.end()) sub.elemTypes[name] = e->second;
    sub.values[name] = g.addInput(name, typeOfTensor(t), InputRole::Input);
    inputs.push_back(t);
  }
  OnnxNode node{sub, n};
  OnnxOutputs outs = importer(node);
  // Constants the importer built (masks, index tables) are inputs of the scratch graph too.
  for (const GraphInput& in : g.inputs()) {
    if (in.role == InputRole::Param) inputs.push_back(makeTensor(g.value(in.value).type, in.init, 0));
  }
  for (ValueId v : outs)  // larger results stay ops of the graph
    if (!numelWithin(OnnxNode::sizesOf(g.type(v).shape), kMaxFoldedElements)) return false;
  g.setOutputs(outs);
  std::vector<Tensor> results = interpret(g, inputs);
  for (size_t i = 0; i < results.size() && i < n.outputs.size(); ++i)
    if (!n.outputs[i].empty()) cx.keepConstant(n.outputs[i], std::move(results[i]));
  return true;
}

}  // namespace

bool isDefaultOnnxDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

std::string onnxOpKey(const proto::NodeProto& n) { return isDefaultOnnxDomain(n.domain) ? n.opType : n.domain + ":" + n.opType; }

namespace {

// The ONNX element type of n's first output where the node says it (see OnnxContext::elemTypes).
std::optional<int> declaredElemType(const OnnxContext& cx, const proto::NodeProto& n) {
  const std::string& op = n.opType;
  for (const auto& a : n.attributes) {
    if (op == "Cast" && a.name == "to") return static_cast<int>(a.i);
    if (op == "Constant" && a.name == "value") return a.t.dataType;
  }
  if (op == "Identity" && std::ssize(n.inputs) == 1)
    if (auto it = cx.elemTypes.find(n.inputs[0]); it != cx.elemTypes.end()) return it->second;
  return std::nullopt;
}

}  // namespace

void importNode(OnnxContext& cx, const proto::NodeProto& n) {
  if (n.outputs.empty()) throw OnnxUnsupported("a node without outputs");
  if (std::optional<int> t = declaredElemType(cx, n)) cx.elemTypes[n.outputs[0]] = *t;
  OnnxNode node{cx, n};
  if (auto mk = constantMakers().find(n.opType); mk != constantMakers().end()) {
    if (std::ssize(n.outputs) != 1) throw OnnxUnsupported("expected one output");
    cx.keepConstant(n.outputs[0], mk->second(node));
    return;
  }
  auto it = importers().find(onnxOpKey(n));
  if (it == importers().end()) throw OnnxUnsupported("unsupported op type '" + onnxOpKey(n) + "'");
  // an Identity copy of a weight is that weight (the TorchScript exporter shares equal ones so)
  if (n.opType == "Identity" && std::ssize(n.inputs) == 1 && cx.weights.count(n.inputs[0])) cx.weights.insert(n.outputs[0]);
  // inputs that are never weights: batch-norm statistics, Clip's bounds (ReLU6's 0 and 6, lifted
  // to initializers by the dynamo exporter)
  static const std::map<std::string, std::vector<int>> notWeights = {{"BatchNormalization", {3, 4}}, {"Clip", {1, 2}}};
  if (auto nw = notWeights.find(n.opType); nw != notWeights.end())
    for (int i : nw->second)
      if (i < std::ssize(n.inputs)) cx.weights.erase(n.inputs[i]);
  if (foldable(n, cx) && fold(cx, n, it->second)) return;
  OnnxOutputs outs = it->second(node);
  for (int i = 0; i < std::ssize(n.outputs); ++i) {
    if (n.outputs[i].empty()) continue;
    if (static_cast<size_t>(i) >= outs.size()) throw OnnxUnsupported("output " + std::to_string(i) + " ('" + n.outputs[i] + "') is not supported");
    cx.values[n.outputs[i]] = outs[static_cast<size_t>(i)];
  }
}

}  // namespace fusebox

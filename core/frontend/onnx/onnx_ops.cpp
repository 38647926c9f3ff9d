#include "core/frontend/onnx/onnx_ops.h"

#include <onnx/onnx_pb.h>

#include <functional>

#include "core/ir/error.h"

namespace fusebox {

ValueId OnnxContext::value(const std::string& name) {
  if (auto it = values.find(name); it != values.end()) return it->second;
  auto c = constants.find(name);
  if (c == constants.end()) throw Error("input '" + name + "' is not produced by any earlier node, graph input or initializer");
  TensorType t;
  t.dtype = c->second.dtype;
  for (int64_t s : c->second.sizes) t.shape.push_back(Dim(s));
  ValueId v = graph.addInput(name, t, InputRole::Param);
  paramValues[name] = c->second;
  values[name] = v;
  return v;
}

const Tensor& OnnxContext::constant(const std::string& name, const char* what) {
  auto c = constants.find(name);
  if (c == constants.end()) throw OnnxUnsupported(std::string(what) + " computed at run time is not supported (it must be an initializer or a Constant)");
  return c->second;
}

namespace {

using Node = onnx::NodeProto;

const onnx::AttributeProto* findAttr(const Node& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
int64_t attrInt(const Node& n, const char* name, int64_t fallback) {
  const auto* a = findAttr(n, name);
  return a ? a->i() : fallback;
}
double attrFloat(const Node& n, const char* name, double fallback) {
  const auto* a = findAttr(n, name);
  return a ? a->f() : fallback;
}
std::vector<int64_t> attrInts(const Node& n, const char* name, std::vector<int64_t> fallback = {}) {
  const auto* a = findAttr(n, name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : fallback;
}
std::string attrString(const Node& n, const char* name, const std::string& fallback) {
  const auto* a = findAttr(n, name);
  return a ? a->s() : fallback;
}

std::vector<int64_t> intsOf(const Tensor& t) {
  std::vector<int64_t> v;
  for (double x : t.data) v.push_back(static_cast<int64_t>(x));
  return v;
}

struct Ctx {
  OnnxContext& cx;
  const Node& n;
  ValueId in(int i) { return cx.value(n.input(i)); }
  bool has(int i) const { return i < n.input_size() && !n.input(i).empty(); }
  const Shape& shape(ValueId v) { return cx.graph.type(v).shape; }
  ValueId emit(const std::string& op, std::vector<ValueId> ins, AttrMap a = {}) { return cx.builder.emit(op, ins, std::move(a)); }
  int64_t axis(int64_t a, size_t rank) {
    if (a < 0) a += static_cast<int64_t>(rank);
    if (a < 0 || a >= static_cast<int64_t>(rank)) throw OnnxUnsupported("axis out of range");
    return a;
  }
};

Shape concreteShape(const std::vector<int64_t>& v) {
  Shape s;
  for (int64_t x : v) s.push_back(Dim(x));
  return s;
}

int64_t dimValue(const Dim& d) {
  if (!d.symbols().empty()) throw OnnxUnsupported("symbolic shapes are not imported");
  return d.coeff();
}

// Two ints per spatial dim from ONNX's [begin..., end...] pads; Fusebox pads symmetrically.
std::vector<int64_t> symmetricPads(const std::vector<int64_t>& pads, size_t spatial) {
  if (pads.empty()) return std::vector<int64_t>(spatial, 0);
  if (pads.size() != 2 * spatial) throw OnnxUnsupported("pads must have 2 values per spatial dim");
  std::vector<int64_t> p(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(spatial));
  for (size_t i = 0; i < spatial; ++i)
    if (pads[i] != pads[i + spatial]) throw OnnxUnsupported("asymmetric pads are not supported");
  return p;
}

void require2d(Ctx& c, ValueId x) {
  if (c.shape(x).size() != 4) throw OnnxUnsupported("rank-" + std::to_string(c.shape(x).size()) + " inputs are not supported (2-D: N, C, H, W only)");
  const auto* ap = findAttr(c.n, "auto_pad");
  if (ap && ap->s() != "NOTSET" && ap->s() != "VALID") throw OnnxUnsupported("auto_pad=" + ap->s() + " is not supported");
}

// softmax / log_softmax: opset < 13 normalizes over the flattened dims from `axis` on.
ValueId softmaxLike(Ctx& c, const std::string& op) {
  ValueId x = c.in(0);
  Shape s = c.shape(x);
  int64_t rank = static_cast<int64_t>(s.size());
  int64_t axis = c.axis(attrInt(c.n, "axis", c.cx.opset >= 13 ? -1 : 1), s.size());
  if (c.cx.opset >= 13 || axis == rank - 1) return c.emit(op, {x}, {{"dim", axis}});
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= dimValue(s[i]);
  ValueId flat = c.emit("reshape", {x}, {{"shape", concreteShape({outer, inner})}});
  return c.emit("reshape", {c.emit(op, {flat}, {{"dim", int64_t{1}}})}, {{"shape", s}});
}

ValueId reduce(Ctx& c, const std::string& op) {
  ValueId x = c.in(0);
  size_t rank = c.shape(x).size();
  std::vector<int64_t> axes = attrInts(c.n, "axes");
  bool axesInput = (op == "sum" && c.cx.opset >= 13) || c.cx.opset >= 18;
  if (axesInput && c.has(1)) axes = intsOf(c.cx.constant(c.n.input(1), "axes"));
  if (axes.empty() && attrInt(c.n, "noop_with_empty_axes", 0)) return x;
  for (int64_t& a : axes) a = c.axis(a, rank);
  if (axes.empty())
    for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  return c.emit(op, {x}, {{"dim", axes}, {"keepdim", attrInt(c.n, "keepdims", 1) != 0}});
}

using Importer = std::function<ValueId(Ctx&)>;

const std::map<std::string, Importer>& importers() {
  static const std::map<std::string, Importer> t = [] {
    std::map<std::string, Importer> m;
    for (auto [onnxOp, op] : std::vector<std::pair<const char*, const char*>>{
             {"Relu", "relu"}, {"Sigmoid", "sigmoid"}, {"Tanh", "tanh"}, {"Exp", "exp"}, {"Log", "log"}, {"Sqrt", "sqrt"},
             {"Neg", "neg"}, {"Abs", "abs"}, {"Erf", "erf"}})
      m[onnxOp] = [op = std::string(op)](Ctx& c) { return c.emit(op, {c.in(0)}); };
    for (auto [onnxOp, op] : std::vector<std::pair<const char*, const char*>>{
             {"Add", "add"}, {"Sub", "sub"}, {"Mul", "mul"}, {"Div", "div"}, {"Equal", "eq"}, {"Less", "lt"},
             {"Greater", "gt"}, {"LessOrEqual", "le"}, {"GreaterOrEqual", "ge"}, {"MatMul", "matmul"}})
      m[onnxOp] = [op = std::string(op)](Ctx& c) { return c.emit(op, {c.in(0), c.in(1)}); };
    for (auto [onnxOp, op] : std::vector<std::pair<const char*, const char*>>{{"Max", "maximum"}, {"Min", "minimum"}})
      m[onnxOp] = [op = std::string(op)](Ctx& c) {
        ValueId v = c.in(0);
        for (int i = 1; i < c.n.input_size(); ++i) v = c.emit(op, {v, c.in(i)});
        return v;
      };
    m["Identity"] = [](Ctx& c) { return c.in(0); };
    m["Dropout"] = [](Ctx& c) {  // inference: identity
      if (c.has(2) && !c.cx.constant(c.n.input(2), "training_mode").data.empty() && c.cx.constant(c.n.input(2), "training_mode").data[0] != 0)
        throw OnnxUnsupported("Dropout with training_mode=true is not supported");
      return c.in(0);
    };
    m["Pow"] = [](Ctx& c) {  // the exponent may have another type than the base; the result has the base's
      ValueId base = c.in(0), exponent = c.in(1);
      DType t = c.cx.graph.type(base).dtype;
      if (!isFloating(t)) throw OnnxUnsupported("Pow of an integer base is not supported");
      if (c.cx.graph.type(exponent).dtype != t) exponent = c.emit("to", {exponent}, {{"dtype", std::string(dtypeName(t))}});
      return c.emit("pow", {base, exponent});
    };
    m["Where"] = [](Ctx& c) { return c.emit("where", {c.in(0), c.in(1), c.in(2)}); };
    m["Gelu"] = [](Ctx& c) { return c.emit("gelu", {c.in(0)}, {{"approximate", attrString(c.n, "approximate", "none")}}); };
    m["Softmax"] = [](Ctx& c) { return softmaxLike(c, "softmax"); };
    m["LogSoftmax"] = [](Ctx& c) { return softmaxLike(c, "log_softmax"); };
    m["ReduceSum"] = [](Ctx& c) { return reduce(c, "sum"); };
    m["ReduceMean"] = [](Ctx& c) { return reduce(c, "mean"); };
    m["ReduceMax"] = [](Ctx& c) { return reduce(c, "amax"); };
    m["ReduceMin"] = [](Ctx& c) { return reduce(c, "amin"); };
    m["Gemm"] = [](Ctx& c) {
      ValueId a = c.in(0), b = c.in(1);
      if (attrInt(c.n, "transA", 0)) a = c.emit("transpose", {a}, {{"dim0", int64_t{0}}, {"dim1", int64_t{1}}});
      if (attrInt(c.n, "transB", 0)) b = c.emit("transpose", {b}, {{"dim0", int64_t{0}}, {"dim1", int64_t{1}}});
      ValueId y = c.emit("matmul", {a, b});
      double alpha = attrFloat(c.n, "alpha", 1), beta = attrFloat(c.n, "beta", 1);
      DType t = c.cx.graph.type(y).dtype;
      if (alpha != 1) y = c.emit("mul", {y, c.cx.builder.scalar(alpha, t)});
      if (c.has(2)) {
        ValueId bias = c.in(2);
        if (beta != 1) bias = c.emit("mul", {bias, c.cx.builder.scalar(beta, t)});
        y = c.emit("add", {y, bias});
      }
      return y;
    };
    m["Conv"] = [](Ctx& c) {
      ValueId x = c.in(0), w = c.in(1);
      require2d(c, x);
      AttrMap a{{"stride", attrInts(c.n, "strides", {1, 1})},
                {"padding", symmetricPads(attrInts(c.n, "pads"), 2)},
                {"dilation", attrInts(c.n, "dilations", {1, 1})},
                {"groups", attrInt(c.n, "group", 1)}};
      std::vector<ValueId> ins{x, w};
      if (c.has(2)) ins.push_back(c.in(2));
      return c.emit("conv2d", ins, a);
    };
    m["MaxPool"] = [](Ctx& c) {
      ValueId x = c.in(0);
      require2d(c, x);
      if (attrInt(c.n, "ceil_mode", 0)) throw OnnxUnsupported("ceil_mode=1 is not supported");
      if (c.n.output_size() > 1 && !c.n.output(1).empty()) throw OnnxUnsupported("the Indices output is not supported");
      for (int64_t d : attrInts(c.n, "dilations", {1, 1}))
        if (d != 1) throw OnnxUnsupported("dilated pooling is not supported");
      return c.emit("max_pool2d", {x}, {{"kernel_size", attrInts(c.n, "kernel_shape")}, {"stride", attrInts(c.n, "strides", {1, 1})},
                                        {"padding", symmetricPads(attrInts(c.n, "pads"), 2)}});
    };
    m["AveragePool"] = [](Ctx& c) {
      ValueId x = c.in(0);
      require2d(c, x);
      if (attrInt(c.n, "ceil_mode", 0)) throw OnnxUnsupported("ceil_mode=1 is not supported");
      std::vector<int64_t> pads = symmetricPads(attrInts(c.n, "pads"), 2);
      bool padded = pads[0] || pads[1];
      if (padded && !attrInt(c.n, "count_include_pad", 0))
        throw OnnxUnsupported("padded average pooling with count_include_pad=0 is not supported");
      return c.emit("avg_pool2d", {x}, {{"kernel_size", attrInts(c.n, "kernel_shape")}, {"stride", attrInts(c.n, "strides", {1, 1})},
                                        {"padding", pads}});
    };
    m["GlobalAveragePool"] = [](Ctx& c) {
      ValueId x = c.in(0);
      require2d(c, x);
      return c.emit("adaptive_avg_pool2d", {x}, {{"output_size", std::vector<int64_t>{1, 1}}});
    };
    m["BatchNormalization"] = [](Ctx& c) {
      if (attrInt(c.n, "training_mode", 0)) throw OnnxUnsupported("training_mode=1 is not supported");
      return c.emit("batch_norm", {c.in(0), c.in(1), c.in(2), c.in(3), c.in(4)},
                    {{"training", false}, {"eps", attrFloat(c.n, "epsilon", 1e-5)}});
    };
    m["Flatten"] = [](Ctx& c) {
      ValueId x = c.in(0);
      Shape s = c.shape(x);
      int64_t axis = attrInt(c.n, "axis", 1);
      if (axis < 0) axis += static_cast<int64_t>(s.size());
      int64_t outer = 1, inner = 1;
      for (int64_t i = 0; i < static_cast<int64_t>(s.size()); ++i) (i < axis ? outer : inner) *= dimValue(s[i]);
      return c.emit("reshape", {x}, {{"shape", concreteShape({outer, inner})}});
    };
    m["Reshape"] = [](Ctx& c) {
      ValueId x = c.in(0);
      Shape s = c.shape(x);
      std::vector<int64_t> target = c.cx.opset >= 5 ? intsOf(c.cx.constant(c.n.input(1), "the shape input"))
                                                    : attrInts(c.n, "shape");
      bool allowZero = attrInt(c.n, "allowzero", 0) != 0;
      for (size_t i = 0; i < target.size(); ++i)
        if (target[i] == 0 && !allowZero) {
          if (i >= s.size()) throw OnnxUnsupported("shape entry 0 copies a dim the input does not have");
          target[i] = dimValue(s[i]);
        }
      return c.emit("reshape", {x}, {{"shape", concreteShape(target)}});
    };
    m["Transpose"] = [](Ctx& c) {
      ValueId x = c.in(0);
      std::vector<int64_t> perm = attrInts(c.n, "perm");
      if (perm.empty())
        for (size_t i = c.shape(x).size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
      return c.emit("permute", {x}, {{"dims", perm}});
    };
    m["Concat"] = [](Ctx& c) {
      std::vector<ValueId> ins;
      for (int i = 0; i < c.n.input_size(); ++i) ins.push_back(c.in(i));
      return c.emit("cat", ins, {{"dim", c.axis(attrInt(c.n, "axis", 0), c.shape(ins[0]).size())}});
    };
    auto squeezeLike = [](bool unsqueeze) {
      return [unsqueeze](Ctx& c) {
        ValueId x = c.in(0);
        Shape s = c.shape(x);
        std::vector<int64_t> axes = c.cx.opset >= 13 && c.has(1) ? intsOf(c.cx.constant(c.n.input(1), "axes")) : attrInts(c.n, "axes");
        Shape out;
        if (unsqueeze) {
          size_t rank = s.size() + axes.size();
          std::vector<bool> inserted(rank, false);
          for (int64_t a : axes) inserted[static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(rank) : a)] = true;
          for (size_t i = 0, j = 0; i < rank; ++i) out.push_back(inserted[i] ? Dim(1) : s[j++]);
        } else {
          std::vector<bool> removed(s.size(), axes.empty());
          for (int64_t a : axes) removed[static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(s.size()) : a)] = true;
          for (size_t i = 0; i < s.size(); ++i)
            if (!(removed[i] && s[i] == Dim(1))) out.push_back(s[i]);
        }
        return c.emit("reshape", {x}, {{"shape", out}});
      };
    };
    m["Unsqueeze"] = squeezeLike(true);
    m["Squeeze"] = squeezeLike(false);
    m["Cast"] = [](Ctx& c) {
      DType t = DType::F32;
      switch (attrInt(c.n, "to", 1)) {
        case onnx::TensorProto::FLOAT: t = DType::F32; break;
        case onnx::TensorProto::DOUBLE: t = DType::F64; break;
        case onnx::TensorProto::INT64: t = DType::I64; break;
        case onnx::TensorProto::INT32: t = DType::I32; break;
        case onnx::TensorProto::BOOL: t = DType::Bool; break;
        default: throw OnnxUnsupported("Cast to ONNX type " + std::to_string(attrInt(c.n, "to", 1)) + " is not supported");
      }
      return c.emit("to", {c.in(0)}, {{"dtype", std::string(dtypeName(t))}});
    };
    m["LeakyRelu"] = [](Ctx& c) {
      ValueId x = c.in(0);
      DType t = c.cx.graph.type(x).dtype;
      ValueId zero = c.cx.builder.scalar(0, t);
      return c.emit("where", {c.emit("gt", {x, zero}), x, c.emit("mul", {x, c.cx.builder.scalar(attrFloat(c.n, "alpha", 0.01), t)})});
    };
    return m;
  }();
  return t;
}

}  // namespace

void importNode(OnnxContext& cx, const onnx::NodeProto& n) {
  if (n.op_type() == "Constant") {
    const auto* v = findAttr(n, "value");
    if (!v || !v->has_t()) throw OnnxUnsupported("Constant nodes without a tensor 'value' are not supported");
    cx.constants[n.output(0)] = onnxTensorOf(v->t(), cx.file + ": Constant");
    return;
  }
  auto it = importers().find(n.op_type());
  if (it == importers().end()) throw OnnxUnsupported("unsupported op type '" + n.op_type() + "'");
  Ctx c{cx, n};
  ValueId out = it->second(c);
  if (n.output_size() < 1) throw OnnxUnsupported("a node without outputs");
  cx.values[n.output(0)] = out;
  for (int i = 1; i < n.output_size(); ++i)
    if (!n.output(i).empty() && n.op_type() != "Dropout") throw OnnxUnsupported("outputs after the first are not supported");
}

}  // namespace fusebox

#include "core/decompose/decompose.h"

#include <climits>
#include <cmath>
#include <functional>

#include "core/ir/passes.h"
#include "core/ir/verifier.h"
#include "core/ops/binary_math.h"
#include "core/ops/graph_builder.h"
#include "core/ops/registry.h"
#include "core/ops/shape_rules.h"
#include "core/ops/unary_math.h"

namespace fusebox {

namespace {

using Ints = std::vector<int64_t>;

// What a decomposition sees: the torch node, its inputs in the new graph, and prim helpers.
class Decomp {
public:
  Decomp(GraphBuilder& b, const Node& n, std::vector<ValueId> ins, TensorType outType)
      : b_(b), node_(n), ins_(std::move(ins)), outType_(std::move(outType)) {}

  ValueId in(size_t i) const { return ins_.at(i); }
  size_t numInputs() const { return ins_.size(); }
  // By value: emitting nodes grows the graph's value table, so references would dangle.
  Shape shape(ValueId v) const { return b_.type(v).shape; }
  DType dtype(ValueId v) const { return b_.type(v).dtype; }
  const TensorType& outType() const { return outType_; }
  AttrReader a() const { return AttrReader{node_.attrs}; }
  const AttrMap& attrs() const { return node_.attrs; }
  const std::string& op() const { return node_.op; }

  ValueId p(const std::string& prim, const std::vector<ValueId>& inputs, AttrMap attrs = {}) {
    return b_.emit("prims." + prim, inputs, std::move(attrs));
  }
  ValueId scalar(double v, DType t) { return b_.scalar(v, t); }
  ValueId size(const Dim& d, DType t) {
    if (d.isConstant()) return scalar(static_cast<double>(d.value()), t);
    return p("sym_size", {}, {{"size", d}, {"dtype", std::string(dtypeName(t))}});
  }
  // Numpy-style (trailing-aligned) broadcast made explicit.
  ValueId bcast(ValueId v, const Shape& to) {
    const Shape from = shape(v);
    if (from == to) return v;
    Ints dims;
    for (size_t i = 0; i < from.size(); ++i) dims.push_back(static_cast<int64_t>(to.size() - from.size() + i));
    return p("broadcast_in_dim", {v}, {{"shape", to}, {"broadcast_dimensions", dims}});
  }
  ValueId binary(const std::string& prim, ValueId x, ValueId y) {
    Shape s = broadcastShapes(shape(x), shape(y), prim);
    return p(prim, {bcast(x, s), bcast(y, s)});
  }
  ValueId withScalar(const std::string& prim, ValueId x, double c) { return binary(prim, x, scalar(c, dtype(x))); }
  ValueId unary(const std::string& prim, ValueId x) { return p(prim, {x}); }
  ValueId reshape(ValueId x, const Shape& s) { return shape(x) == s ? x : p("reshape", {x}, {{"shape", s}}); }
  // Reduction over `axes` (normalized, sorted); keepdim re-adds them as size 1.
  ValueId reduce(const std::string& prim, ValueId x, const Ints& axes, bool keepdim) {
    if (axes.empty()) return x;
    ValueId r = p(prim, {x}, {{"dims", axes}});
    return keepdim ? reshape(r, reducedShape(shape(x), axes, true)) : r;
  }
  ValueId mean(ValueId x, const Ints& axes, bool keepdim) {
    Dim n(1);
    for (int64_t ax : axes) n = n * shape(x)[ax];
    return binary("div", reduce("sum", x, axes, keepdim), size(n, dtype(x)));
  }
  ValueId where(ValueId c, ValueId x, ValueId y) {
    Shape s = broadcastShapes(broadcastShapes(shape(x), shape(y), "where"), shape(c), "where");
    return p("where", {bcast(c, s), bcast(x, s), bcast(y, s)});
  }
  ValueId cast(ValueId x, DType t) {
    return dtype(x) == t ? x : p("convert_element_type", {x}, {{"dtype", std::string(dtypeName(t))}});
  }
  ValueId transposeLast(ValueId x) {
    Ints perm;
    for (size_t i = 0; i < shape(x).size(); ++i) perm.push_back(static_cast<int64_t>(i));
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    return p("permute", {x}, {{"dims", perm}});
  }
  ValueId sigmoid(ValueId x) {
    ValueId e = unary("exp", unary("neg", x));
    return binary("div", scalar(1, dtype(x)), withScalar("add", e, 1));
  }
  // Stable softmax pieces along `dim`: (x - max, log(sum(exp(x - max)))) with keepdim shapes.
  std::pair<ValueId, ValueId> shiftedAndLogSum(ValueId x, int64_t dim) {
    ValueId shifted = binary("sub", x, reduce("amax", x, {dim}, true));
    ValueId logSum = unary("log", reduce("sum", unary("exp", shifted), {dim}, true));
    return {shifted, logSum};
  }
  ValueId matmul(ValueId x, ValueId y);  // torch.matmul semantics on prims.matmul

private:
  GraphBuilder& b_;
  const Node& node_;
  std::vector<ValueId> ins_;
  TensorType outType_;
};

ValueId Decomp::matmul(ValueId x, ValueId y) {
  Shape xs = shape(x), ys = shape(y);
  bool xVec = xs.size() == 1, yVec = ys.size() == 1;
  if (xVec) x = reshape(x, Shape{Dim(1), xs[0]}), xs = shape(x);
  if (yVec) y = reshape(y, Shape{ys[0], Dim(1)}), ys = shape(y);
  Shape batch = broadcastShapes(Shape(xs.begin(), xs.end() - 2), Shape(ys.begin(), ys.end() - 2), "matmul");
  auto full = [&](ValueId v, const Shape& s) {
    Shape target = batch;
    target.push_back(s[s.size() - 2]);
    target.push_back(s.back());
    return bcast(v, target);
  };
  ValueId r = p("matmul", {full(x, xs), full(y, ys)});
  return reshape(r, outType_.shape);
}

using DecompFn = std::function<ValueId(Decomp&)>;

std::map<std::string, DecompFn> buildTable() {
  std::map<std::string, DecompFn> t;
  for (const UnaryMath& u : unaryMathOps()) t[u.name] = [op = u.name](Decomp& d) { return d.unary(op, d.in(0)); };
  for (const BinaryMath& b : binaryMathOps())
    if (b.torchOp) t[b.name] = [op = b.name](Decomp& d) { return d.binary(op, d.in(0), d.in(1)); };
  t["relu"] = [](Decomp& d) { return d.withScalar("maximum", d.in(0), 0); };
  t["sigmoid"] = [](Decomp& d) { return d.sigmoid(d.in(0)); };
  t["silu"] = [](Decomp& d) { return d.binary("mul", d.in(0), d.sigmoid(d.in(0))); };
  t["gelu"] = [](Decomp& d) {
    ValueId x = d.in(0);
    ValueId inner;
    if (d.a().s("approximate") == "tanh") {  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
      ValueId x3 = d.binary("mul", d.binary("mul", x, x), x);
      ValueId poly = d.binary("add", x, d.withScalar("mul", x3, 0.044715));
      inner = d.unary("tanh", d.withScalar("mul", poly, std::sqrt(2.0 / M_PI)));
    } else {  // 0.5 x (1 + erf(x / sqrt(2)))
      inner = d.unary("erf", d.withScalar("mul", x, M_SQRT1_2));
    }
    return d.binary("mul", d.withScalar("mul", x, 0.5), d.withScalar("add", inner, 1));
  };
  t["where"] = [](Decomp& d) { return d.where(d.in(0), d.in(1), d.in(2)); };
  t["masked_fill"] = [](Decomp& d) { return d.where(d.in(1), d.scalar(d.a().f("value"), d.dtype(d.in(0))), d.in(0)); };
  t["to"] = [](Decomp& d) { return d.cast(d.in(0), d.outType().dtype); };
  t["full"] = [](Decomp& d) { return d.p("full", {}, d.attrs()); };
  t["arange"] = [](Decomp& d) { return d.p("iota", {}, d.attrs()); };
  t["sym_size"] = [](Decomp& d) { return d.p("sym_size", {}, d.attrs()); };
  t["dropout"] = [](Decomp& d) {
    double prob = d.a().f("p");
    if (!d.a().b("training") || prob == 0.0) return d.in(0);
    const Shape& s = d.shape(d.in(0));
    ValueId u = d.p("uniform_random", {}, {{"shape", s}, {"seed", d.a().i("seed")}, {"dtype", std::string("f32")}});
    ValueId keep = d.binary("ge", u, d.scalar(prob, DType::F32));
    return d.where(keep, d.withScalar("mul", d.in(0), 1.0 / (1.0 - prob)), d.scalar(0, d.dtype(d.in(0))));
  };

  for (const char* op : {"sum", "amax", "amin"})
    t[op] = [op = std::string(op)](Decomp& d) {
      auto axes = reductionAxes(d.a().ints("dim"), d.shape(d.in(0)).size(), op);
      return d.reduce(op, d.in(0), axes, d.a().b("keepdim"));
    };
  t["mean"] = [](Decomp& d) {
    return d.mean(d.in(0), reductionAxes(d.a().ints("dim"), d.shape(d.in(0)).size(), "mean"), d.a().b("keepdim"));
  };
  t["softmax"] = [](Decomp& d) {
    int64_t dim = normalizeAxis(d.a().i("dim"), d.shape(d.in(0)).size(), "softmax");
    ValueId shifted = d.binary("sub", d.in(0), d.reduce("amax", d.in(0), {dim}, true));
    ValueId e = d.unary("exp", shifted);
    return d.binary("div", e, d.reduce("sum", e, {dim}, true));
  };
  t["log_softmax"] = [](Decomp& d) {
    int64_t dim = normalizeAxis(d.a().i("dim"), d.shape(d.in(0)).size(), "log_softmax");
    auto [shifted, logSum] = d.shiftedAndLogSum(d.in(0), dim);
    return d.binary("sub", shifted, logSum);
  };

  t["linear"] = [](Decomp& d) {
    const Shape& xs = d.shape(d.in(0));
    const Shape& ws = d.shape(d.in(1));
    Dim rows = *numel(xs).dividedBy(ws[1]);
    ValueId x2 = d.reshape(d.in(0), Shape{rows, ws[1]});
    ValueId y = d.p("matmul", {x2, d.p("permute", {d.in(1)}, {{"dims", Ints{1, 0}}})});
    if (d.numInputs() == 3) y = d.binary("add", y, d.in(2));
    return d.reshape(y, d.outType().shape);
  };
  t["matmul"] = [](Decomp& d) { return d.matmul(d.in(0), d.in(1)); };
  t["bmm"] = [](Decomp& d) { return d.p("matmul", {d.in(0), d.in(1)}); };
  t["layer_norm"] = [](Decomp& d) {
    size_t rank = d.shape(d.in(0)).size(), k = d.a().ints("normalized_shape").size();
    Ints axes;
    for (size_t i = rank - k; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
    ValueId xc = d.binary("sub", d.in(0), d.mean(d.in(0), axes, true));
    ValueId var = d.mean(d.binary("mul", xc, xc), axes, true);
    ValueId y = d.binary("mul", xc, d.unary("rsqrt", d.withScalar("add", var, d.a().f("eps"))));
    if (d.numInputs() >= 2) y = d.binary("mul", y, d.in(1));
    if (d.numInputs() >= 3) y = d.binary("add", y, d.in(2));
    return y;
  };
  t["batch_norm"] = [](Decomp& d) {
    const Shape& xs = d.shape(d.in(0));
    auto channel = [&](ValueId v) {  // [C] -> [1, C, 1, ...]
      Shape s(xs.size(), Dim(1));
      s[1] = xs[1];
      return d.reshape(v, s);
    };
    ValueId mean, var;
    if (d.a().b("training")) {
      Ints axes{0};
      for (size_t i = 2; i < xs.size(); ++i) axes.push_back(static_cast<int64_t>(i));
      mean = d.mean(d.in(0), axes, true);
      ValueId xc = d.binary("sub", d.in(0), mean);
      var = d.mean(d.binary("mul", xc, xc), axes, true);
    } else {
      mean = channel(d.in(3));
      var = channel(d.in(4));
    }
    ValueId scale = d.binary("mul", d.unary("rsqrt", d.withScalar("add", var, d.a().f("eps"))), channel(d.in(1)));
    return d.binary("add", d.binary("mul", d.binary("sub", d.in(0), mean), scale), channel(d.in(2)));
  };
  t["conv2d"] = [](Decomp& d) {
    ValueId y = d.p("conv2d", {d.in(0), d.in(1)}, d.attrs());
    if (d.numInputs() == 3) {
      Shape s{Dim(1), d.shape(d.in(2))[0], Dim(1), Dim(1)};
      y = d.binary("add", y, d.reshape(d.in(2), s));
    }
    return y;
  };
  for (const char* op : {"max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "conv2d_backward_input",
                         "conv2d_backward_weight", "max_pool2d_backward", "avg_pool2d_backward",
                         "adaptive_avg_pool2d_backward"}) {
    std::string name(op);
    t[op] = [name](Decomp& d) {
      std::vector<ValueId> ins;
      for (size_t i = 0; i < d.numInputs(); ++i) ins.push_back(d.in(i));
      return d.p(name, ins, d.attrs());
    };
  }
  t["embedding"] = [](Decomp& d) {
    ValueId flat = d.reshape(d.in(0), Shape{numel(d.shape(d.in(0)))});
    return d.reshape(d.p("index_select", {d.in(1), flat}, {{"dim", int64_t{0}}}), d.outType().shape);
  };
  t["embedding_backward"] = [](Decomp& d) {
    const Shape& gs = d.shape(d.in(0));
    Dim n = numel(d.shape(d.in(1)));
    ValueId zeros = d.p("full", {}, {{"shape", d.outType().shape}, {"value", 0.0}, {"dtype", std::string(dtypeName(d.dtype(d.in(0))))}});
    return d.p("index_add", {zeros, d.reshape(d.in(1), Shape{n}), d.reshape(d.in(0), Shape{n, gs.back()})}, {{"dim", int64_t{0}}});
  };
  t["cross_entropy"] = [](Decomp& d) {
    // log_softmax, gather the target column, mean of the negatives.
    const Shape& ls = d.shape(d.in(0));
    auto [shifted, logSum] = d.shiftedAndLogSum(d.in(0), 1);
    ValueId logp = d.binary("sub", shifted, logSum);
    ValueId picked = d.p("gather", {logp, d.reshape(d.in(1), Shape{ls[0], Dim(1)})}, {{"dim", int64_t{1}}});
    return d.unary("neg", d.mean(picked, {0, 1}, false));
  };
  t["mse_loss"] = [](Decomp& d) {
    ValueId diff = d.binary("sub", d.in(0), d.in(1));
    Ints all;
    for (size_t i = 0; i < d.shape(diff).size(); ++i) all.push_back(static_cast<int64_t>(i));
    ValueId sq = d.binary("mul", diff, diff);
    return all.empty() ? sq : d.mean(sq, all, false);
  };

  for (const char* op : {"reshape", "view"}) t[op] = [](Decomp& d) { return d.reshape(d.in(0), d.outType().shape); };
  t["permute"] = [](Decomp& d) {
    Ints dims;
    for (int64_t x : d.a().ints("dims")) dims.push_back(normalizeAxis(x, d.shape(d.in(0)).size(), "permute"));
    return d.p("permute", {d.in(0)}, {{"dims", dims}});
  };
  t["transpose"] = [](Decomp& d) {
    size_t rank = d.shape(d.in(0)).size();
    Ints perm;
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(i));
    std::swap(perm[normalizeAxis(d.a().i("dim0"), rank, "transpose")], perm[normalizeAxis(d.a().i("dim1"), rank, "transpose")]);
    return d.p("permute", {d.in(0)}, {{"dims", perm}});
  };
  t["expand"] = [](Decomp& d) { return d.bcast(d.in(0), d.outType().shape); };
  t["slice"] = [](Decomp& d) {
    const Shape& xs = d.shape(d.in(0));
    int64_t dim = normalizeAxis(d.a().i("dim"), xs.size(), "slice");
    if (d.outType().shape == xs && (!xs[dim].isConstant() || d.a().i("step") == 1)) return d.in(0);
    int64_t n = xs[dim].value(), step = d.a().i("step");
    auto clamp = [n](int64_t v) { return std::clamp(v < 0 ? v + n : v, int64_t{0}, n); };
    int64_t start = clamp(d.a().i("start")), end = std::max(clamp(d.a().i("end")), start);
    return d.p("slice", {d.in(0)}, {{"dim", dim}, {"start", start}, {"end", end}, {"step", step}});
  };
  t["slice_backward"] = [](Decomp& d) {
    const Shape& out = d.outType().shape;
    int64_t dim = normalizeAxis(d.a().i("dim"), out.size(), "slice_backward");
    if (!out[dim].isConstant()) return d.in(0);
    int64_t n = out[dim].value(), len = d.shape(d.in(0))[dim].value(), step = d.a().i("step");
    int64_t start = std::clamp(d.a().i("start") < 0 ? d.a().i("start") + n : d.a().i("start"), int64_t{0}, n);
    int64_t used = len == 0 ? 0 : (len - 1) * step + 1;
    return d.p("pad", {d.in(0)}, {{"dim", dim}, {"low", start}, {"high", n - start - used}, {"interior", step - 1}, {"value", 0.0}});
  };
  t["cat"] = [](Decomp& d) {
    std::vector<ValueId> ins;
    for (size_t i = 0; i < d.numInputs(); ++i) ins.push_back(d.in(i));
    return d.p("cat", ins, {{"dim", normalizeAxis(d.a().i("dim"), d.outType().shape.size(), "cat")}});
  };
  return t;
}

const std::map<std::string, DecompFn>& table() {
  static const std::map<std::string, DecompFn> t = buildTable();
  return t;
}

}  // namespace

bool hasDecomposition(const std::string& op) { return table().count(op) > 0; }

Graph decompose(const Graph& g) {
  Graph out;
  out.name = g.name + ".prims";
  std::map<ValueId, ValueId> map;
  for (const GraphInput& in : g.inputs()) {
    const Value& v = g.value(in.value);
    map[v.id] = out.addInput(v.name, v.type, in.role, in.init);
  }
  GraphBuilder b(out);
  b.setScalarOp("prims.full");
  for (const Node& n : g.nodes()) {
    auto fn = table().find(n.op);
    if (fn == table().end()) throw Error(describeNode(n) + ": no decomposition for op '" + n.op + "'");
    std::vector<ValueId> ins;
    for (ValueId v : n.inputs) ins.push_back(map.at(v));
    b.setOrigin(n);
    Decomp d(b, n, ins, g.type(n.outputs[0]));
    ValueId result;
    try {
      result = fn->second(d);
    } catch (const ShapeError& e) {
      throw Error(describeNode(n) + ": decomposition failed: " + e.message());
    }
    if (out.type(result) != g.type(n.outputs[0]))
      throw VerifyError(describeNode(n) + ": decomposition produced " + out.type(result).str() + " instead of " +
                        g.type(n.outputs[0]).str());
    if (out.value(result).producer != kNoId && out.hasDefaultName(result))
      out.nameValue(result, g.value(n.outputs[0]).name);
    map[n.outputs[0]] = result;
  }
  std::vector<ValueId> outs;
  for (ValueId v : g.outputs()) outs.push_back(map.at(v));
  out.setOutputs(outs);
  // Ops decompose to shared prims (a forward cross-entropy and the row statistics its backward
  // formula saves both compute max and log-sum-exp): merge them so each is computed once.
  out = eliminateCommonSubexpressions(out);
  verifyGraph(out, primOpTyper());
  return out;
}

std::map<std::string, int> countOps(const Graph& g) {
  std::map<std::string, int> counts;
  for (const Node& n : g.nodes()) ++counts[n.op];
  return counts;
}

}  // namespace fusebox

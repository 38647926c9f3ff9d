#include "core/trace/trace.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <variant>

#include "core/ir/verifier.h"
#include "core/ops/graph_builder.h"
#include "core/ops/registry.h"

namespace fusebox {

namespace {

// What an expression evaluates to while tracing.
struct TraceValue;
using TraceList = std::vector<TraceValue>;
struct TraceValue {
  enum class Kind { Tensor, Number, Dim, String, Bool, List } kind = Kind::Number;
  ValueId tensor = kNoId;
  double number = 0;
  bool isInteger = false;
  Dim dim;
  std::string text;
  bool boolean = false;
  TraceList list;
};

const char* kindName(TraceValue::Kind k) {
  switch (k) {
    case TraceValue::Kind::Tensor: return "a tensor";
    case TraceValue::Kind::Number: return "a number";
    case TraceValue::Kind::Dim: return "a dimension";
    case TraceValue::Kind::String: return "a string";
    case TraceValue::Kind::Bool: return "a bool";
    case TraceValue::Kind::List: return "a list";
  }
  return "?";
}

size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t prev = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cur = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] != b[j - 1])});
      prev = cur;
    }
  }
  return row[b.size()];
}

class Tracer {
  // Evaluation depth (expressions and scopes): the parser bounds it, the tracer checks it again for
  // a ModelDef built some other way, so deep input is an error at its location, never a stack overflow.
  // Each nesting level the parser counts (a call, list, parenthesis or minus) holds at most three
  // syntax-tree levels (it, a sum, a product), so whatever parses also traces.
  static constexpr int kMaxDepth = 4 * kMaxNestingDepth;
  class Depth {
  public:
    Depth(int& depth, const SourceLoc& at) : depth_(depth) {
      if (++depth_ > kMaxDepth)
        throw ParseError("model nested too deeply to trace (more than " + std::to_string(kMaxDepth) + " levels)", at);
    }
    ~Depth() { --depth_; }
    Depth(const Depth&) = delete;
    Depth& operator=(const Depth&) = delete;

  private:
    int& depth_;
  };

public:
  Tracer(const ModelDef& m, const TraceOptions& o) : model_(m), opts_(o) {
    for (const auto& [sym, size] : m.dims) {
      known_.insert(sym);
      if (!o.symbolic) bindings_[sym] = size;
    }
    for (const auto& [sym, size] : o.dims) {
      if (size < 0) throw Error("dimension " + sym + " must not be negative, got " + std::to_string(size));
      bindings_[sym] = size;
    }
  }

  Graph run() {
    g_.name = model_.name;
    uint64_t seed = 1;
    for (const InputDecl& in : model_.inputs) {
      TensorType t{in.type.dtype, resolveType(in.type, true, "input '" + in.name + "'")};
      InitSpec init;
      if (in.range) init = InitSpec{InitSpec::Kind::Uniform, seed, double(in.range->first), double(in.range->second)};
      else if (in.type.dtype == DType::Bool) init = InitSpec{InitSpec::Kind::Uniform, seed, 0.0, 2.0};
      else if (isInteger(in.type.dtype)) init = InitSpec{InitSpec::Kind::Uniform, seed, 0.0, 10.0};
      else init = InitSpec{InitSpec::Kind::Randn, seed, 1.0, 0.0};
      ++seed;
      vars_[in.name] = g_.addInput(in.name, t, InputRole::Input, init);
    }
    for (const auto& [sym, _] : opts_.dims)
      if (!known_.count(sym))
        throw Error("model '" + model_.name + "' has no dimension named " + sym + knownDimsHint(), model_.loc);
    bool returned = runBlock(model_.body, "");
    if (!returned) throw ParseError("model '" + model_.name + "' has no return statement", model_.loc);
    verifyGraph(g_, torchOpTyper());
    return std::move(g_);
  }

private:
  std::string knownDimsHint() const {
    std::string s;
    for (const std::string& d : known_) s += (s.empty() ? "" : ", ") + d;
    return s.empty() ? " (it has none)" : " (it has: " + s + ")";
  }

  Dim resolveDim(const DimExpr& d, bool allowSymbolic) {
    if (d.value) return Dim(*d.value);
    known_.insert(d.symbol);
    auto it = bindings_.find(d.symbol);
    if (it != bindings_.end()) return Dim(it->second);
    if (!allowSymbolic)
      throw ShapeError("parameter sizes must be concrete: dimension '" + d.symbol + "' has no size", d.loc);
    return Dim::symbol(d.symbol);
  }

  // The sizes of a declared type; `what` names the input or parameter in errors.
  Shape resolveType(const TypeExpr& t, bool allowSymbolic, const std::string& what) {
    Shape s;
    for (const DimExpr& d : t.dims) s.push_back(resolveDim(d, allowSymbolic));
    try {
      (void)numel(s);
    } catch (const ShapeError&) {
      throw ShapeError(what + " of type " + std::string(dtypeName(t.dtype)) + shapeStr(s) +
                           " has more elements than int64 can count (or, beside a zero dim, dims whose product does not fit)", t.loc);
    }
    return s;
  }

  // Returns true when the block ran a return statement.
  bool runBlock(const std::vector<Stmt>& body, const std::string& scope) {
    for (const Stmt& s : body) {
      if (returned_) throw ParseError("statement after return", s.loc);
      switch (s.kind) {
        case Stmt::Kind::Param: {
          std::string full = scope.empty() ? s.name : scope + "." + s.name;
          if (params_.count(full) || vars_.count(full))
            throw ParseError("'" + full + "' is already defined", s.loc);
          params_[full] = g_.addInput(full, TensorType{s.type.dtype, resolveType(s.type, false, "parameter '" + full + "'")},
                                      InputRole::Param, s.init);
          break;
        }
        case Stmt::Kind::Scope: {
          Depth d(depth_, s.loc);
          runBlock(s.body, scope.empty() ? s.name : scope + "." + s.name);
          break;
        }
        case Stmt::Kind::Assign: {
          TraceValue v = eval(s.values[0], scope);
          if (v.kind != TraceValue::Kind::Tensor)
            throw ShapeError("'" + s.name + "' must be assigned a tensor, got " + kindName(v.kind), s.loc);
          if (params_.count(s.name)) throw ParseError("cannot assign to parameter '" + s.name + "'", s.loc);
          if (g_.value(v.tensor).producer != kNoId) g_.nameValue(v.tensor, s.name);
          vars_[s.name] = v.tensor;
          break;
        }
        case Stmt::Kind::Return: {
          if (!scope.empty()) throw ParseError("return inside scope '" + scope + "'", s.loc);
          std::vector<ValueId> outs;
          for (const Expr& e : s.values) outs.push_back(tensorOf(eval(e, scope), e.loc, "a returned value"));
          for (size_t i = 0; i < outs.size(); ++i)  // unnamed results get a readable name
            if (g_.value(outs[i]).producer != kNoId && g_.hasDefaultName(outs[i]))
              g_.nameValue(outs[i], outs.size() == 1 ? "output" : "output" + std::to_string(i));
          g_.setOutputs(outs);
          returned_ = true;
          break;
        }
      }
    }
    return returned_;
  }

  ValueId tensorOf(const TraceValue& v, const SourceLoc& loc, const std::string& what) {
    if (v.kind != TraceValue::Kind::Tensor) throw ShapeError(what + " must be a tensor, got " + kindName(v.kind), loc);
    return v.tensor;
  }

  TraceValue tensorValue(ValueId id) {
    TraceValue v;
    v.kind = TraceValue::Kind::Tensor;
    v.tensor = id;
    return v;
  }

  // Looks a name up: variables, then parameters from the innermost scope outwards, then dims.
  TraceValue lookup(const std::string& name, const std::string& scope, const SourceLoc& loc) {
    if (auto it = vars_.find(name); it != vars_.end()) return tensorValue(it->second);
    for (std::string prefix = scope;; ) {
      std::string full = prefix.empty() ? name : prefix + "." + name;
      if (auto it = params_.find(full); it != params_.end()) return tensorValue(it->second);
      if (prefix.empty()) break;
      size_t dot = prefix.rfind('.');
      prefix = dot == std::string::npos ? "" : prefix.substr(0, dot);
    }
    if (known_.count(name)) {
      TraceValue v;
      v.kind = TraceValue::Kind::Dim;
      auto it = bindings_.find(name);
      v.dim = it != bindings_.end() ? Dim(it->second) : Dim::symbol(name);
      return v;
    }
    throw ParseError("unknown name '" + name + "'", loc);
  }

  TraceValue eval(const Expr& e, const std::string& scope) {
    Depth depth(depth_, e.loc);
    TraceValue v;
    switch (e.kind) {
      case Expr::Kind::Number:
        v.kind = TraceValue::Kind::Number;
        v.number = e.number;
        v.isInteger = e.isInteger;
        return v;
      case Expr::Kind::String:
        v.kind = TraceValue::Kind::String;
        v.text = e.text;
        return v;
      case Expr::Kind::Bool:
        v.kind = TraceValue::Kind::Bool;
        v.boolean = e.boolean;
        return v;
      case Expr::Kind::Ident: return lookup(e.text, scope, e.loc);
      case Expr::Kind::List:
        v.kind = TraceValue::Kind::List;
        for (const Expr& a : e.args) v.list.push_back(eval(a, scope));
        return v;
      case Expr::Kind::Negate: {
        TraceValue x = eval(e.args[0], scope);
        if (x.kind == TraceValue::Kind::Number) {
          x.number = -x.number;
          return x;
        }
        if (x.kind == TraceValue::Kind::Dim) {
          x.dim = located(e.loc, [&] { return x.dim * Dim(-1); });
          return x;
        }
        return emit("neg", {tensorOf(x, e.loc, "the operand of '-'")}, {}, scope, e.loc);
      }
      case Expr::Kind::Binary: return evalBinary(e, scope);
      case Expr::Kind::Call: return evalCall(e, scope);
    }
    return v;
  }

  // Size arithmetic on dims (B*T) throws ShapeError without a location when it overflows.
  template <class F>
  static auto located(const SourceLoc& at, F f) -> decltype(f()) {
    try {
      return f();
    } catch (const ShapeError& err) {
      if (err.loc().valid()) throw;
      throw ShapeError(err.message(), at);
    }
  }

  // A left-associative chain a op1 b op2 c ...: folded in a loop, however long.
  TraceValue evalBinary(const Expr& e, const std::string& scope) {
    TraceValue acc = eval(e.args.at(0), scope);
    for (size_t i = 0; i < e.text.size() && i + 1 < e.args.size(); ++i) {
      TraceValue b = eval(e.args[i + 1], scope);
      const SourceLoc& at = i < e.opLocs.size() ? e.opLocs[i] : e.loc;
      acc = applyBinary(e.text[i], acc, b, at, e.args[0].loc, e.args[i + 1].loc, scope);
    }
    return acc;
  }

  TraceValue applyBinary(char op, const TraceValue& a, const TraceValue& b, const SourceLoc& at, const SourceLoc& aLoc,
                         const SourceLoc& bLoc, const std::string& scope) {
    using K = TraceValue::Kind;
    const std::string opText(1, op);
    if (a.kind == K::Number && b.kind == K::Number) {  // constant folding of scalar arithmetic
      TraceValue r = a;
      r.number = op == '+' ? a.number + b.number : op == '-' ? a.number - b.number
               : op == '*' ? a.number * b.number : a.number / b.number;
      r.isInteger = a.isInteger && b.isInteger && op != '/';
      return r;
    }
    auto asDim = [&](const TraceValue& x) -> std::optional<Dim> {
      if (x.kind == K::Dim) return x.dim;
      if (x.kind == K::Number && x.isInteger) return Dim(toInt64(x.number, at));
      return std::nullopt;
    };
    if ((a.kind == K::Dim || b.kind == K::Dim) && asDim(a) && asDim(b)) {  // size arithmetic: B*T
      TraceValue r;
      r.kind = K::Dim;
      std::optional<Dim> d = located(at, [&]() -> std::optional<Dim> {
        if (op == '*') return *asDim(a) * *asDim(b);
        if (op == '/') return asDim(a)->dividedBy(*asDim(b));
        if (op == '+') return asDim(a)->plus(*asDim(b));
        return asDim(a)->plus(*asDim(b) * Dim(-1));
      });
      if (!d) throw ShapeError("cannot compute " + asDim(a)->str() + " " + opText + " " + asDim(b)->str() + " exactly", at);
      r.dim = *d;
      return r;
    }
    static const std::map<char, std::string> ops = {{'+', "add"}, {'-', "sub"}, {'*', "mul"}, {'/', "div"}};
    auto operand = [](const TraceValue& x) { return x.kind == K::Tensor || x.kind == K::Number; };
    if (!operand(a) || !operand(b) || (a.kind != K::Tensor && b.kind != K::Tensor))
      throw ShapeError(std::string("operator '") + op + "' needs a tensor or two numbers, got " + kindName(a.kind) +
                           " and " + kindName(b.kind), at);
    DType dt = g_.type(a.kind == K::Tensor ? a.tensor : b.tensor).dtype;
    ValueId x = a.kind == K::Tensor ? a.tensor : scalarConstant(a, dt, scope, aLoc);
    ValueId y = b.kind == K::Tensor ? b.tensor : scalarConstant(b, dt, scope, bLoc);
    return emit(ops.at(op), {x, y}, {}, scope, at);
  }

  // A Python-style scalar operand: it takes the dtype of the tensor it combines with.
  ValueId scalarConstant(const TraceValue& v, DType dtype, const std::string& scope, const SourceLoc& loc) {
    if (v.kind != TraceValue::Kind::Number) throw ShapeError(std::string("expected a tensor or a number, got ") + kindName(v.kind), loc);
    b_.setOrigin(scope, {}, loc);
    return b_.scalar(v.number, dtype);
  }

  // An integer-valued number as int64 (integer literals have at most 18 digits, but folded
  // arithmetic such as 999999999999999999 * 100 leaves the range).
  static int64_t toInt64(double x, const SourceLoc& loc) {
    if (!(x >= -9.2e18 && x <= 9.2e18)) throw ShapeError("integer " + attrStr(Attr(x)) + " is out of the int64 range", loc);
    return static_cast<int64_t>(x);
  }

  std::optional<Attr> toAttr(const TraceValue& v, const SourceLoc& loc) {
    using K = TraceValue::Kind;
    switch (v.kind) {
      case K::Number:
        if (v.isInteger) return Attr(toInt64(v.number, loc));
        return Attr(v.number);
      case K::Dim:
        if (v.dim.isConstant()) return Attr(v.dim.value());
        return Attr(v.dim);
      case K::String: return Attr(v.text);
      case K::Bool: return Attr(v.boolean);
      case K::List: {
        Shape s;
        bool allConst = true;
        for (const TraceValue& x : v.list) {
          if (x.kind == K::Number && x.isInteger) s.push_back(Dim(toInt64(x.number, loc)));
          else if (x.kind == K::Dim) s.push_back(x.dim), allConst &= x.dim.isConstant();
          else return std::nullopt;
        }
        if (!allConst) return Attr(s);
        std::vector<int64_t> ints;
        for (const Dim& d : s) ints.push_back(d.value());
        return Attr(ints);
      }
      case K::Tensor: return std::nullopt;
    }
    return std::nullopt;
  }

  TraceValue evalCall(const Expr& e, const std::string& scope) {
    const OpSchema* schema = OpRegistry::instance().find(e.text);
    if (!schema) {
      std::string best;
      size_t bestDist = 3;
      for (const OpSchema& s : OpRegistry::instance().all()) {
        size_t d = editDistance(e.text, s.name);
        if (d < bestDist) bestDist = d, best = s.name;
      }
      throw ParseError("unknown op '" + e.text + "'" + (best.empty() ? "" : " (did you mean '" + best + "'?)"), e.loc);
    }
    std::vector<std::optional<ValueId>> slots(schema->variadic ? 0 : schema->inputs.size());
    std::vector<ValueId> variadic;
    AttrMap attrs;
    std::vector<const TraceValue*> pendingScalars;
    std::vector<SourceLoc> pendingLocs;
    std::vector<TraceValue> args;
    for (const Expr& a : e.args) args.push_back(eval(a, scope));
    size_t nextSlot = 0, nextAttr = 0;
    auto attrTaken = [&](size_t i) { return attrs.count(schema->attrs[i].name) > 0; };
    for (size_t i = 0; i < args.size(); ++i) {
      const TraceValue& v = args[i];
      const std::string& key = e.argNames[i];
      const SourceLoc& loc = e.args[i].loc;
      bool tensorList = v.kind == TraceValue::Kind::List && !v.list.empty() &&
                        std::all_of(v.list.begin(), v.list.end(), [](auto& x) { return x.kind == TraceValue::Kind::Tensor; });
      if (!key.empty()) {
        auto in = std::find_if(schema->inputs.begin(), schema->inputs.end(), [&](auto& s) { return s.name == key; });
        if (in != schema->inputs.end() && !schema->variadic) {
          slots[in - schema->inputs.begin()] = tensorOf(v, loc, "argument '" + key + "' of " + e.text);
          continue;
        }
        auto spec = std::find_if(schema->attrs.begin(), schema->attrs.end(), [&](auto& s) { return s.name == key; });
        if (spec == schema->attrs.end()) {
          std::string known;
          for (auto& s : schema->inputs) known += (known.empty() ? "" : ", ") + s.name;
          for (auto& s : schema->attrs) known += (known.empty() ? "" : ", ") + s.name;
          throw ShapeError(e.text + ": unknown argument '" + key + "' (it takes: " + known + ")", loc);
        }
        if (attrs.count(key)) throw ShapeError(e.text + ": argument '" + key + "' is given twice", loc);
        auto attr = toAttr(v, loc);
        if (!attr) throw ShapeError(e.text + ": argument '" + key + "' cannot be " + kindName(v.kind), loc);
        attrs[key] = *attr;
        continue;
      }
      if (v.kind == TraceValue::Kind::Tensor || tensorList) {
        std::vector<ValueId> ts;
        if (tensorList) for (auto& x : v.list) ts.push_back(x.tensor);
        else ts.push_back(v.tensor);
        for (ValueId t : ts) {
          if (schema->variadic) {
            variadic.push_back(t);
            continue;
          }
          while (nextSlot < slots.size() && slots[nextSlot]) ++nextSlot;
          if (nextSlot >= slots.size())
            throw ShapeError(e.text + ": too many tensor arguments (it takes " + std::to_string(slots.size()) + ")", loc);
          slots[nextSlot++] = t;
        }
        continue;
      }
      while (nextAttr < schema->attrs.size() && attrTaken(nextAttr)) ++nextAttr;
      auto attr = toAttr(v, loc);
      if (nextAttr < schema->attrs.size() && attr) {
        attrs[schema->attrs[nextAttr++].name] = *attr;
      } else if (v.kind == TraceValue::Kind::Number && !schema->variadic) {
        pendingScalars.push_back(&v);  // e.g. pow(x, 2.0): a scalar in a tensor slot
        pendingLocs.push_back(loc);
      } else {
        throw ShapeError(e.text + ": unexpected " + std::string(kindName(v.kind)) + " argument", loc);
      }
    }
    // Scalars in tensor slots take the dtype of the call's first non-bool tensor argument.
    if (!pendingScalars.empty()) {
      std::optional<DType> dt;
      for (auto& s : slots)
        if (s && !dt && g_.type(*s).dtype != DType::Bool) dt = g_.type(*s).dtype;
      for (size_t k = 0; k < pendingScalars.size(); ++k) {
        while (nextSlot < slots.size() && slots[nextSlot]) ++nextSlot;
        if (nextSlot >= slots.size()) throw ShapeError(e.text + ": too many arguments", pendingLocs[k]);
        slots[nextSlot++] = scalarConstant(*pendingScalars[k], dt.value_or(DType::F32), scope, pendingLocs[k]);
      }
    }
    std::vector<ValueId> inputs = variadic;
    for (size_t i = 0; i < slots.size(); ++i) {
      if (slots[i]) {
        if (inputs.size() != i)
          throw ShapeError(e.text + ": input '" + schema->inputs[i].name + "' is given but '" +
                               schema->inputs[inputs.size()].name + "' before it is not", e.loc);
        inputs.push_back(*slots[i]);
      } else if (!schema->inputs[i].optional) {
        throw ShapeError(e.text + ": missing tensor argument '" + schema->inputs[i].name + "'", e.loc);
      }
    }
    return emit(e.text, inputs, attrs, scope, e.loc);
  }

  TraceValue emit(const std::string& op, const std::vector<ValueId>& inputs, AttrMap attrs, const std::string& scope,
                  const SourceLoc& loc) {
    b_.setOrigin(scope, {}, loc);
    return tensorValue(b_.emit(op, inputs, std::move(attrs)));
  }

  const ModelDef& model_;
  const TraceOptions& opts_;
  Graph g_;
  GraphBuilder b_{g_};
  std::map<std::string, int64_t> bindings_;
  std::set<std::string> known_;
  std::map<std::string, ValueId> vars_, params_;
  bool returned_ = false;
  int depth_ = 0;
};

}  // namespace

Graph trace(const ModelDef& model, const TraceOptions& options) {
  if (model.imported) {  // imported graphs have concrete shapes: there are no symbolic dims to bind
    if (!options.dims.empty()) throw Error(model.file + ": --dim does not apply to an imported model (its shapes are concrete)");
    return *model.imported;
  }
  return Tracer(model, options).run();
}

}  // namespace fusebox

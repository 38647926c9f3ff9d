#include "core/ops/registry.h"

#include <algorithm>
#include <climits>
#include <cstdint>

#include "core/ops/shape_rules.h"

namespace fusebox {

const char* opKindName(OpKind k) {
  switch (k) {
    case OpKind::Elementwise: return "elementwise";
    case OpKind::Reduction: return "reduction";
    case OpKind::Matmul: return "matmul";
    case OpKind::Conv: return "conv";
    case OpKind::Norm: return "norm";
    case OpKind::Pool: return "pool";
    case OpKind::View: return "view";
    case OpKind::Loss: return "loss";
    case OpKind::Creation: return "creation";
    case OpKind::Random: return "random";
  }
  return "?";
}

size_t OpSchema::minInputs() const {
  if (variadic) return 1;
  return static_cast<size_t>(std::count_if(inputs.begin(), inputs.end(), [](auto& s) { return !s.optional; }));
}

size_t OpSchema::maxInputs() const { return variadic ? SIZE_MAX : inputs.size(); }

OpRegistry::OpRegistry() {
  registerElementwiseOps(*this);
  registerReductionOps(*this);
  registerNNOps(*this);
  registerShapeOps(*this);
  registerBackwardOps(*this);
  registerPrims(*this);
  std::sort(ops_.begin(), ops_.end(), [](const OpSchema& a, const OpSchema& b) { return a.name < b.name; });
}

const OpRegistry& OpRegistry::instance() {
  static const OpRegistry registry;
  return registry;
}

const OpSchema* OpRegistry::find(std::string_view name) const {
  for (const OpSchema& s : ops_)
    if (s.name == name) return &s;
  return nullptr;
}

void OpRegistry::add(OpSchema schema) { ops_.push_back(std::move(schema)); }

std::vector<const OpSchema*> OpRegistry::torchOps() const {
  std::vector<const OpSchema*> out;
  for (const OpSchema& s : ops_)
    if (!s.isPrim) out.push_back(&s);
  return out;
}

std::vector<const OpSchema*> OpRegistry::prims() const {
  std::vector<const OpSchema*> out;
  for (const OpSchema& s : ops_)
    if (s.isPrim) out.push_back(&s);
  return out;
}

// Converts `a` to `kind` where the conversion is lossless and unsurprising.
static std::optional<Attr> convertAttr(const Attr& a, AttrKind kind) {
  AttrKind have = attrKind(a);
  if (have == kind) return a;
  if (kind == AttrKind::Float && have == AttrKind::Int) return static_cast<double>(std::get<int64_t>(a));
  if (kind == AttrKind::Dim && have == AttrKind::Int) return Dim(std::get<int64_t>(a));
  if (kind == AttrKind::Shape && have == AttrKind::Ints) {
    const auto& v = std::get<std::vector<int64_t>>(a);
    return Shape(v.begin(), v.end());
  }
  if (kind == AttrKind::Ints && have == AttrKind::Shape) {
    std::vector<int64_t> v;
    for (const Dim& d : std::get<Shape>(a)) {
      if (!d.isConstant()) return std::nullopt;
      v.push_back(d.value());
    }
    return v;
  }
  if (kind == AttrKind::Ints && have == AttrKind::Int) return std::vector<int64_t>{std::get<int64_t>(a)};
  return std::nullopt;
}

AttrMap normalizeAttrs(const OpSchema& schema, const AttrMap& given) {
  AttrMap out;
  for (const auto& [name, value] : given) {
    auto spec = std::find_if(schema.attrs.begin(), schema.attrs.end(), [&](auto& s) { return s.name == name; });
    if (spec == schema.attrs.end()) {
      std::string known;
      for (const AttrSpec& s : schema.attrs) known += (known.empty() ? "" : ", ") + s.name;
      shapeFail(schema.name, "unknown attribute '" + name + "'" +
                                 (known.empty() ? " (it takes none)" : " (it takes: " + known + ")"));
    }
    auto converted = convertAttr(value, spec->kind);
    if (!converted)
      shapeFail(schema.name, "attribute '" + name + "' must be a " + attrKindName(spec->kind) + ", got " +
                                 attrKindName(attrKind(value)) + " " + attrStr(value));
    out[name] = *converted;
  }
  for (const AttrSpec& s : schema.attrs) {
    if (out.count(s.name)) continue;
    if (!s.defaultValue) shapeFail(schema.name, "missing required attribute '" + s.name + "'");
    out[s.name] = *s.defaultValue;
  }
  return out;
}

std::vector<TensorType> inferTypes(const std::string& op, const std::vector<TensorType>& inputs, AttrMap& attrs) {
  const OpSchema* schema = OpRegistry::instance().find(op);
  if (!schema) throw ShapeError("unknown op '" + op + "'");
  if (inputs.size() < schema->minInputs() || inputs.size() > schema->maxInputs()) {
    std::string expect = schema->variadic ? "at least 1"
                         : schema->minInputs() == schema->maxInputs()
                             ? std::to_string(schema->minInputs())
                             : std::to_string(schema->minInputs()) + " to " + std::to_string(schema->maxInputs());
    shapeFail(op, "expects " + expect + " tensor input(s), got " + std::to_string(inputs.size()));
  }
  attrs = normalizeAttrs(*schema, attrs);
  return schema->infer(InferCall{op, inputs, attrs});
}

}  // namespace fusebox

namespace fusebox {

static std::vector<TensorType> typeNode(const Node& node, const std::vector<TensorType>& inputs) {
  AttrMap attrs = node.attrs;
  std::vector<TensorType> types = inferTypes(node.op, inputs, attrs);
  if (attrs != node.attrs) throw ShapeError("attributes are not normalized (defaults missing or kinds unconverted)");
  return types;
}

OpTyper primOpTyper() {
  return [](const Node& node, const std::vector<TensorType>& inputs) {
    const OpSchema* s = OpRegistry::instance().find(node.op);
    if (s && !s->isPrim) throw ShapeError("'" + node.op + "' is not a prim: decomposition left a torch-level op behind");
    return typeNode(node, inputs);
  };
}

OpTyper torchOpTyper() {
  return [](const Node& node, const std::vector<TensorType>& inputs) {
    const OpSchema* s = OpRegistry::instance().find(node.op);
    if (s && s->isPrim) throw ShapeError("prim '" + node.op + "' in a torch-level graph");
    return typeNode(node, inputs);
  };
}

std::string opKindColor(const Node& node) {
  const OpSchema* s = OpRegistry::instance().find(node.op);
  if (!s) return "#f4cccc";
  switch (s->kind) {
    case OpKind::Elementwise: return "#e3f2e1";
    case OpKind::Reduction: return "#fde9c9";
    case OpKind::Matmul: return "#d4e4fb";
    case OpKind::Conv: return "#cfd8f7";
    case OpKind::Norm: return "#f6e0f4";
    case OpKind::Pool: return "#e0f0f4";
    case OpKind::View: return "#eeeeee";
    case OpKind::Loss: return "#f9d6d5";
    case OpKind::Creation: return "#f5f5dc";
    case OpKind::Random: return "#fff3b0";
  }
  return "";
}

}  // namespace fusebox

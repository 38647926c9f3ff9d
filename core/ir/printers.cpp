#include "core/ir/printers.h"

#include <map>
#include <sstream>

#include "core/ir/json_writer.h"

namespace fusebox {

static std::string attrsText(const AttrMap& attrs) {
  std::string s;
  for (const auto& [k, v] : attrs) s += ", " + k + "=" + attrStr(v);
  return s;
}

std::string printText(const Graph& g) {
  std::ostringstream os;
  auto ref = [&](ValueId v) { return "%" + g.value(v).name; };
  os << "graph " << g.name << "(";
  bool first = true;
  for (const GraphInput& in : g.inputs()) {
    if (in.role != InputRole::Input) continue;
    os << (first ? "" : ", ") << ref(in.value) << ": " << g.type(in.value).str();
    first = false;
  }
  os << ") {\n";
  for (const GraphInput& in : g.inputs()) {
    if (in.role == InputRole::Input) continue;
    os << "  " << inputRoleName(in.role) << " " << ref(in.value) << ": " << g.type(in.value).str();
    if (in.role == InputRole::Param) os << " = " << in.init.str() << (in.trainable ? "" : "  (constant: not trained)");
    os << "\n";
  }
  for (const Node& n : g.nodes()) {
    os << "  ";
    for (size_t i = 0; i < n.outputs.size(); ++i)
      os << (i ? ", " : "") << ref(n.outputs[i]) << ": " << g.type(n.outputs[i]).str();
    os << " = " << n.op << "(";
    for (size_t i = 0; i < n.inputs.size(); ++i) os << (i ? ", " : "") << ref(n.inputs[i]);
    std::string a = attrsText(n.attrs);
    os << (n.inputs.empty() && !a.empty() ? a.substr(2) : a) << ")";
    os << "  # n" << n.id;
    if (n.provenance != std::vector<NodeId>{n.id}) {
      os << " from";
      for (NodeId p : n.provenance) os << " n" << p;
    }
    if (n.recomputed) os << " recomputed";
    if (!n.scope.empty()) os << " " << n.scope;
    if (n.loc.valid()) os << " @" << n.loc.str();
    os << "\n";
  }
  os << "  return ";
  for (size_t i = 0; i < g.outputs().size(); ++i) os << (i ? ", " : "") << ref(g.outputs()[i]);
  os << "\n}\n";
  return os.str();
}

static void writeType(JsonWriter& w, const TensorType& t) {
  w.key("dtype").value(dtypeName(t.dtype));
  w.key("shape").beginArray();
  for (const Dim& d : t.shape) {
    if (d.isConstant()) w.value(d.value());
    else w.value(d.str());
  }
  w.endArray();
}

static void writeAttr(JsonWriter& w, const Attr& a) {
  w.beginObject().key(attrKindName(attrKind(a)));
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          w.beginArray();
          for (int64_t x : v) w.value(x);
          w.endArray();
        } else if constexpr (std::is_same_v<T, Shape>) {
          w.beginArray();
          for (const Dim& d : v) w.value(d.str());
          w.endArray();
        } else if constexpr (std::is_same_v<T, Dim>) {
          w.value(v.str());
        } else {
          w.value(v);
        }
      },
      a);
  w.endObject();
}

std::string printJson(const Graph& g) {
  JsonWriter w;
  w.beginObject().key("name").value(g.name);
  w.key("inputs").beginArray();
  for (const GraphInput& in : g.inputs()) {
    const Value& v = g.value(in.value);
    w.beginObject().key("id").value(int64_t{v.id}).key("name").value(v.name);
    w.key("role").value(inputRoleName(in.role));
    writeType(w, v.type);
    if (in.role == InputRole::Param) w.key("init").value(in.init.str());
    w.endObject();
  }
  w.endArray().key("nodes").beginArray();
  for (const Node& n : g.nodes()) {
    w.beginObject().key("id").value(int64_t{n.id}).key("op").value(n.op);
    w.key("inputs").beginArray();
    for (ValueId v : n.inputs) w.value(int64_t{v});
    w.endArray().key("outputs").beginArray();
    for (ValueId v : n.outputs) {
      w.beginObject().key("id").value(int64_t{v}).key("name").value(g.value(v).name);
      writeType(w, g.type(v));
      w.endObject();
    }
    w.endArray().key("attrs").beginObject();
    for (const auto& [k, a] : n.attrs) {
      w.key(k);
      writeAttr(w, a);
    }
    w.endObject().key("provenance").beginArray();
    for (NodeId p : n.provenance) w.value(int64_t{p});
    w.endArray().key("scope").value(n.scope);
    if (n.recomputed) w.key("recomputed").value(true);
    if (n.loc.valid()) w.key("loc").value(n.loc.str());
    w.endObject();
  }
  w.endArray().key("outputs").beginArray();
  for (ValueId v : g.outputs()) w.value(int64_t{v});
  w.endArray().endObject();
  return w.str();
}

std::string dotQuote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string printDot(const Graph& g, const DotOptions& options) {
  std::ostringstream os;
  os << "digraph " << dotQuote(g.name) << " {\n"
     << "  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", fontname=\"Helvetica\", "
        "fontsize=10];\n  edge [color=\"#555555\", arrowsize=0.6];\n";
  for (const GraphInput& in : g.inputs()) {
    const Value& v = g.value(in.value);
    const char* fill = in.role == InputRole::Param ? "\"#f2efe6\"" : in.role == InputRole::Input ? "\"#dde8f5\"" : "\"#f8e1e7\"";
    os << "  v" << v.id << " [shape=ellipse, fillcolor=" << fill
       << ", label=" << dotQuote(v.name + "\n" + v.type.str()) << "];\n";
  }
  std::map<std::string, std::vector<const Node*>> byScope;
  for (const Node& n : g.nodes()) {
    std::string top = options.clusterScopes ? n.scope.substr(0, n.scope.find('.')) : "";
    byScope[top].push_back(&n);
  }
  for (const auto& [scope, nodes] : byScope) {
    std::string indent = "  ";
    if (!scope.empty()) {
      os << "  subgraph " << dotQuote("cluster_" + scope) << " {\n    label=" << dotQuote(scope)
         << "; style=\"rounded,dashed\"; color=\"#999999\"; fontname=\"Helvetica\"; fontsize=10;\n";
      indent = "    ";
    }
    for (const Node* n : nodes) {
      std::string types;
      for (ValueId v : n->outputs) types += "\n" + g.type(v).str();
      std::string tooltip = n->op + attrsText(n->attrs) + "\nscope: " + (n->scope.empty() ? "-" : n->scope);
      if (n->loc.valid()) tooltip += "\nat " + n->loc.str();
      os << indent << "n" << n->id << " [label=" << dotQuote(n->op + types) << ", tooltip=" << dotQuote(tooltip);
      if (options.fillColor) {
        std::string c = options.fillColor(*n);
        if (!c.empty()) os << ", fillcolor=" << dotQuote(c);
      }
      os << "];\n";
    }
    if (!scope.empty()) os << "  }\n";
  }
  auto source = [&](ValueId v) {
    NodeId p = g.value(v).producer;
    return p == kNoId ? "v" + std::to_string(v) : "n" + std::to_string(p);
  };
  for (const Node& n : g.nodes())
    for (ValueId v : n.inputs) os << "  " << source(v) << " -> n" << n.id << ";\n";
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    os << "  out" << i << " [shape=plaintext, style=\"\", label=" << dotQuote("output " + std::to_string(i)) << "];\n";
    os << "  " << source(g.outputs()[i]) << " -> out" << i << ";\n";
  }
  os << "}\n";
  return os.str();
}

}  // namespace fusebox

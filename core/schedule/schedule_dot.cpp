#include "core/schedule/schedule_dot.h"

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/ir/printers.h"

namespace fusebox {

namespace {

std::string sizes(const LoopNode& n) {
  std::string s;
  for (const LoopVar& v : n.vars) s += (s.empty() ? "" : "x") + std::to_string(v.size);
  if (!n.reduceVars.empty()) {
    s += " | ";
    std::string r;
    for (const LoopVar& v : n.reduceVars) r += (r.empty() ? "" : "x") + std::to_string(v.size);
    s += r;
  }
  return s.empty() ? "scalar" : s;
}

const char* fill(const LoopNode& n) {
  switch (n.kind) {
    case LoopNode::Kind::Extern: return "#f6d7a7";
    case LoopNode::Kind::Reduction: return "#c9e4de";
    default: return "#dbe7f7";
  }
}

}  // namespace

std::string printScheduleDot(const LoopProgram& p, const Schedule& s) {
  std::ostringstream os;
  os << "digraph " << dotQuote(p.name) << " {\n  rankdir=TB;\n  compound=true;\n"
     << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n"
     << "  edge [color=\"#555555\", arrowsize=0.6];\n";
  for (const std::string& in : p.inputs) os << "  " << dotQuote("buf_" + in) << " [shape=ellipse, fillcolor=\"#f2efe6\", label=" << dotQuote(in) << "];\n";
  // A node in several kernels (a concatenation its convolutions write in place) is drawn once,
  // outside their frames: Graphviz puts a node in the first cluster that names it.
  std::map<int, std::vector<std::string>> kernelsOf;
  for (const Kernel& k : s.kernels)
    for (const KernelItem& it : k.items) kernelsOf[it.node].push_back(k.name);
  auto nodeLine = [&](const LoopNode& n, const std::string& note) {
    std::string label = (n.kind == LoopNode::Kind::Extern      ? externPrim(n.externOp).qualifiedName()
                         : n.kind == LoopNode::Kind::Reduction ? "reduce " + reductionMath(n.reduceOp).name
                                                               : std::string("pointwise")) +
                        "\n" + n.output + " [" + sizes(n) + "]" + note;
    std::string prims;
    for (const PrimUse& pr : n.prims) prims += (prims.empty() ? "" : ", ") + pr.op + (pr.recomputed ? " (recomputed)" : "");
    std::string tip = n.str() + (prims.empty() ? "" : "\nprims: " + prims) + (n.scope.empty() ? "" : "\nscope: " + n.scope);
    return "l" + std::to_string(n.id) + " [label=" + dotQuote(label) + ", tooltip=" + dotQuote(tip) + ", fillcolor=\"" + fill(n) + "\"" +
           (note.empty() ? "" : ", style=\"rounded,filled,dashed\"") + "];\n";
  };
  for (const Kernel& k : s.kernels) {
    os << "  subgraph " << dotQuote("cluster_" + k.name) << " {\n    label=" << dotQuote(k.name + " (" + std::to_string(k.items.size()) + " node" + (k.items.size() == 1 ? "" : "s") + ")")
       << "; style=\"rounded\"; color=\"" << (k.isExtern ? "#b07a2a" : "#3a6ea5") << "\"; fontname=\"Helvetica\"; fontsize=10;\n";
    for (const KernelItem& it : k.items)
      if (kernelsOf[it.node].size() == 1) os << "    " << nodeLine(p.nodes[it.node], "");
    os << "  }\n";
  }
  for (const auto& [id, names] : kernelsOf) {
    if (names.size() < 2) continue;
    std::string note = "\nwritten in place by";
    for (const std::string& k : names) note += " " + k;
    os << "  " << nodeLine(p.nodes[id], note);
  }
  std::map<std::string, int> producer;
  for (const LoopNode& n : p.nodes) producer[n.output] = n.id;
  for (const LoopNode& n : p.nodes)
    for (const std::string& b : n.reads()) {
      auto it = producer.find(b);
      os << "  " << (it != producer.end() ? "l" + std::to_string(it->second) : dotQuote("buf_" + b)) << " -> l" << n.id << ";\n";
    }
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    auto it = producer.find(p.outputs[i]);
    os << "  out" << i << " [shape=plaintext, style=\"\", label=" << dotQuote("output " + std::to_string(i)) << "];\n  "
       << (it != producer.end() ? "l" + std::to_string(it->second) : dotQuote("buf_" + p.outputs[i])) << " -> out" << i << ";\n";
  }
  os << "}\n";
  return os.str();
}

}  // namespace fusebox

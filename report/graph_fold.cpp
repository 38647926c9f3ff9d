#include "report/graph_fold.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <sstream>

#include "core/ir/printers.h"

namespace fusebox {

namespace {

const std::string kClusterPrefix = "cluster_";  // an expanded scope's cluster: "cluster_<box number>"

bool allDigits(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string parentOf(const std::string& scope) {
  size_t dot = scope.rfind('.');
  return dot == std::string::npos ? "" : scope.substr(0, dot);
}

// The name shown for a scope inside its parent: "conv1" in "layer2.0"; a numbered child keeps its
// parent's last name ("layer2.0", "h.3"), which reads better than a bare "0".
std::string shownName(const std::string& scope) {
  std::string parent = parentOf(scope);
  std::string own = parent.empty() ? scope : scope.substr(parent.size() + 1);
  bool number = !own.empty() && allDigits(own);
  if (!number || parent.empty()) return own;
  return parent.substr(parent.rfind('.') == std::string::npos ? 0 : parent.rfind('.') + 1) + "." + own;
}

// The longest common prefix of two scopes, by levels.
std::string commonScope(const std::string& a, const std::string& b) {
  std::vector<std::string> la = scopeLevels(a), lb = scopeLevels(b);
  std::string common;
  for (size_t i = 0; i < std::min(la.size(), lb.size()) && la[i] == lb[i]; ++i) common = la[i];
  return common;
}

constexpr int kOutputsKeptOnTop = 4;

// A label line longer than this is cut to its end ("…features.18.2/Constant_output_0"): an
// exporter's long constant names would otherwise make boxes as wide as the pane.
constexpr size_t kMaxLabelLine = 40;

std::string shortLabel(const std::string& label) {
  std::string out, line;
  auto flush = [&] {
    if (line.size() > kMaxLabelLine) {
      size_t start = line.size() - (kMaxLabelLine - 1);
      while (start < line.size() && (static_cast<unsigned char>(line[start]) & 0xC0) == 0x80) ++start;  // not inside a UTF-8 character
      line = "\u2026" + line.substr(start);
    }
    out += line;
    line.clear();
  };
  for (char c : label) {
    if (c == '\n') {
      flush();
      out += '\n';
    } else {
      line += c;
    }
  }
  flush();
  return out;
}

// The op of a node label: its first line ("prims.add\nf32[4, 8]" -> "prims.add").
std::string firstLine(const std::string& label) { return label.substr(0, label.find('\n')); }

}  // namespace

bool inScope(const std::string& scope, const std::string& outer) {
  return scope == outer || (scope.size() > outer.size() && scope.compare(0, outer.size(), outer) == 0 && scope[outer.size()] == '.');
}

std::vector<std::string> scopeLevels(const std::string& scope) {
  std::vector<std::string> levels;
  for (size_t dot = scope.find('.'); !scope.empty(); dot = scope.find('.', dot + 1)) {
    levels.push_back(scope.substr(0, dot));
    if (dot == std::string::npos) break;
  }
  return levels;
}

ScopeFolding::ScopeFolding(DotGraph graph, const std::map<std::string, std::string>& scopes, bool kernelClusters)
    : graph_(std::move(graph)), kernelClusters_(kernelClusters) {
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const DotNode& n = graph_.nodes[i];
    index_[n.name] = i;
    while (n.name.compare(0, boxPrefix_.size(), boxPrefix_) == 0) boxPrefix_ += "#";  // never collide with a node
  }
  for (const DotCluster& c : graph_.clusters) clusterLabel_[c.name] = c.label;
  std::map<std::string, int> opCount;  // nodes with a recorded scope, per scope at any depth
  for (const DotNode& n : graph_.nodes) {
    auto it = scopes.find(n.name);
    if (it == scopes.end()) continue;
    placement_[n.name] = it->second;
    recorded_[n.name] = it->second;
    for (const std::string& level : scopeLevels(it->second)) ++opCount[level];
  }
  placeUnscopedNodes();
  // A scope of one op is drawn as that op: boxing it would hide it behind a click.
  for (const auto& [node, scope] : placement_) {
    std::vector<std::string> levels = scopeLevels(scope);
    std::string kept;
    for (const std::string& l : levels)
      if (opCount[l] > 1) kept = l;
    placement_[node] = kept;
  }
  std::set<std::string> all;
  for (const auto& [node, scope] : placement_)
    for (const std::string& l : scopeLevels(scope))
      if (opCount[l] > 1) {
        all.insert(l);
        ++memberCount_[l];
      }
  for (const std::string& s : all) {  // std::set order puts "a" before "a.b": parents first
    scopeId_[s] = static_cast<int>(scopeOrder_.size());
    scopeOrder_.push_back(s);
    std::string parent = parentOf(s);
    while (!parent.empty() && !all.count(parent)) parent = parentOf(parent);
    children_[parent].insert(s);
  }
}

void ScopeFolding::placeUnscopedNodes() {
  std::map<std::string, std::vector<std::string>> neighbours;
  for (const auto& [tail, head] : graph_.edges) {
    neighbours[tail].push_back(head);
    neighbours[head].push_back(tail);
  }
  // A graph's outputs stay at the top, where they are read, unless there are many (a training
  // forward graph's saved activations): those fold with what computes them.
  int outputs = static_cast<int>(std::count_if(graph_.nodes.begin(), graph_.nodes.end(), [](const DotNode& n) { return n.shape == "plaintext"; }));
  for (const DotNode& n : graph_.nodes) {
    if (placement_.count(n.name)) continue;
    std::string placed;
    bool first = true;
    if (n.shape != "plaintext" || outputs > kOutputsKeptOnTop)
      for (const std::string& other : neighbours[n.name]) {
        auto it = placement_.find(other);
        if (it == placement_.end()) continue;  // another unscoped node: no say
        placed = first ? it->second : commonScope(placed, it->second);
        first = false;
      }
    placement_[n.name] = placed;
  }
}

const std::string& ScopeFolding::placement(const std::string& node) const {
  static const std::string none;
  auto it = placement_.find(node);
  return it == placement_.end() ? none : it->second;
}

int ScopeFolding::depthOf(const std::string& scope) const { return static_cast<int>(scopeLevels(scope).size()); }

std::vector<std::string> ScopeFolding::members(const std::string& scope) const {
  std::vector<std::string> out;
  for (const DotNode& n : graph_.nodes) {
    const std::string& p = placement(n.name);
    if (p == scope || (p.size() > scope.size() && p.compare(0, scope.size() + 1, scope + ".") == 0)) out.push_back(n.name);
  }
  return out;
}

std::vector<std::string> ScopeFolding::recordedIn(const std::string& scope) const {
  std::vector<std::string> out;
  if (scope.empty()) return out;
  for (const DotNode& n : graph_.nodes) {
    auto it = recorded_.find(n.name);
    if (it == recorded_.end()) continue;
    const std::string& r = it->second;
    if (r == scope || (r.size() > scope.size() && r.compare(0, scope.size() + 1, scope + ".") == 0)) out.push_back(n.name);
  }
  return out;
}

std::set<std::string> ScopeFolding::initialExpansion() const {
  std::set<std::string> expanded;
  // Open through a chain of lone scopes: the root (or an opened scope) whose only content is one
  // child scope.
  std::string at;
  for (;;) {
    auto kids = children_.find(at);
    if (kids == children_.end() || kids->second.size() != 1) break;
    const std::string& only = *kids->second.begin();
    bool directNodes = false;
    for (const auto& [node, scope] : placement_)
      if (scope == at && !at.empty()) directNodes = true;
    if (!at.empty() && directNodes) break;
    if (at.empty()) {
      int topNodes = 0;
      for (const auto& [node, scope] : placement_) topNodes += scope.empty();
      if (topNodes > 4) break;  // the top level has its own content: show the box beside it
    }
    expanded.insert(only);
    at = only;
  }
  return expanded;
}

std::set<std::string> ScopeFolding::expansionToDepth(int depth) const {
  std::set<std::string> expanded;
  for (const std::string& s : scopeOrder_)
    if (depthOf(s) <= depth) expanded.insert(s);
  return expanded;
}

std::set<std::string> ScopeFolding::revealing(const std::string& node, std::set<std::string> expanded) const {
  for (const std::string& l : scopeLevels(placement(node)))
    if (scopeId_.count(l)) expanded.insert(l);
  return expanded;
}

bool ScopeFolding::boxed(const std::string& scope, const std::set<std::string>& expanded) const {
  return scopeId_.count(scope) && !expanded.count(scope);
}

std::string ScopeFolding::boxName(const std::string& scope) const { return boxPrefix_ + std::to_string(scopeId_.at(scope)); }

std::string ScopeFolding::scopeNumbered(const std::string& name, const std::string& prefix) const {
  if (name.compare(0, prefix.size(), prefix) != 0) return "";
  std::string digits = name.substr(prefix.size());
  if (digits.empty() || digits.size() > 9 || !allDigits(digits)) return "";
  size_t id = std::stoul(digits);
  return id < scopeOrder_.size() ? scopeOrder_[id] : "";
}

std::string ScopeFolding::boxScope(const std::string& item) const { return scopeNumbered(item, boxPrefix_); }

std::string ScopeFolding::clusterScope(const std::string& cluster) const {
  return kernelClusters_ ? "" : scopeNumbered(cluster, kClusterPrefix);
}

std::string ScopeFolding::clusterOf(const std::string& scope) const {
  auto it = scopeId_.find(scope);
  return kernelClusters_ || it == scopeId_.end() ? "" : kClusterPrefix + std::to_string(it->second);
}

std::string ScopeFolding::visibleItem(const std::string& node, const std::set<std::string>& expanded) const {
  for (const std::string& l : scopeLevels(placement(node)))
    if (boxed(l, expanded)) return boxName(l);
  return node;
}

std::string ScopeFolding::describeScope(const std::string& scope) const {
  std::map<std::string, int> ops;
  std::vector<std::string> inside = members(scope);
  for (const std::string& m : inside) {
    const DotNode& n = graph_.nodes[index_.at(m)];
    if (n.shape != "ellipse" && n.shape != "plaintext") ++ops[firstLine(n.label)];
  }
  std::vector<std::pair<int, std::string>> top;
  for (const auto& [op, count] : ops) top.push_back({-count, op});
  std::sort(top.begin(), top.end());
  std::ostringstream os;
  os << scope << ": " << inside.size() << " node" << (inside.size() == 1 ? "" : "s");
  for (size_t i = 0; i < top.size() && i < 6; ++i) os << (i ? ", " : " (") << top[i].second << " " << -top[i].first;
  if (!top.empty()) os << (top.size() > 6 ? ", …)" : ")");
  return os.str();
}

std::string ScopeFolding::foldedDot(const std::set<std::string>& expanded) const {
  std::ostringstream os;
  os << "digraph " << dotQuote(graph_.name) << " {\n  rankdir=TB;\n"
     << "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", fontname=\"Helvetica\", fontsize=10];\n"
     << "  edge [color=\"#555555\", arrowsize=0.6];\n";
  // Each drawn item and the cluster it sits in: an expanded scope's (graph clusters) or its kernel's.
  std::map<std::string, std::vector<std::string>> inCluster;  // cluster key -> item statements
  std::set<std::string> drawnBoxes;
  auto scopeKey = [](const std::string& s) { return s.empty() ? std::string() : "s:" + s; };
  for (const DotNode& n : graph_.nodes) {
    std::string item = visibleItem(n.name, expanded);
    if (item != n.name) {
      std::string scope = boxScope(item);
      if (!drawnBoxes.insert(scope).second) continue;
      std::string stmt = dotQuote(item) + " [label=" + dotQuote(shownName(scope) + "\n" + std::to_string(memberCount_.at(scope)) + " nodes") +
                         ", tooltip=" + dotQuote(describeScope(scope) + "\ndouble-click to expand") +
                         ", shape=box, style=\"filled\", fillcolor=\"#e3ebf6\"]";
      std::string parent = parentOf(scope);  // the nearest enclosing scope that is drawn at all
      while (!parent.empty() && !scopeId_.count(parent)) parent = parentOf(parent);
      inCluster[kernelClusters_ ? std::string() : scopeKey(parent)].push_back(stmt);
      continue;
    }
    std::string stmt = dotQuote(n.name) + " [label=" + dotQuote(shortLabel(n.label));
    if (!n.tooltip.empty() || shortLabel(n.label) != n.label) stmt += ", tooltip=" + dotQuote(n.tooltip.empty() ? n.label : n.tooltip);
    if (!n.fill.empty()) stmt += ", fillcolor=" + dotQuote(n.fill);
    if (!n.shape.empty()) stmt += ", shape=" + dotQuote(n.shape);
    if (n.shape == "plaintext") stmt += ", style=\"\"";
    stmt += "]";
    inCluster[kernelClusters_ ? (n.cluster.empty() ? "" : "k:" + n.cluster) : scopeKey(placement(n.name))].push_back(stmt);
  }
  for (const auto& [key, items] : inCluster)  // top-level items
    if (key.empty())
      for (const std::string& s : items) os << "  " << s << ";\n";
  if (kernelClusters_) {
    for (const DotCluster& c : graph_.clusters) {
      auto it = inCluster.find("k:" + c.name);
      if (it == inCluster.end()) continue;
      os << "  subgraph " << dotQuote(c.name) << " {\n    label=" << dotQuote(c.label) << "; style=\"rounded\";";
      if (!c.color.empty()) os << " color=" << dotQuote(c.color) << ";";
      os << "\n";
      for (const std::string& s : it->second) os << "    " << s << ";\n";
      os << "  }\n";
    }
  } else {
    // Expanded scopes as nested clusters, drawn where they hold something.
    std::function<bool(const std::string&)> holds = [&](const std::string& scope) {
      if (inCluster.count(scopeKey(scope))) return true;
      auto kids = children_.find(scope);
      if (kids == children_.end()) return false;
      return std::any_of(kids->second.begin(), kids->second.end(), [&](const std::string& k) { return !boxed(k, expanded) && holds(k); });
    };
    std::function<void(const std::string&, int)> emit = [&](const std::string& scope, int depth) {
      std::string indent(2 * static_cast<size_t>(depth), ' ');
      os << indent << "subgraph " << dotQuote(clusterOf(scope)) << " {\n"
         << indent << "  label=" << dotQuote(shownName(scope)) << "; style=\"rounded,dashed\"; color=\"#8a9bb5\";\n";
      if (auto it = inCluster.find(scopeKey(scope)); it != inCluster.end())
        for (const std::string& s : it->second) os << indent << "  " << s << ";\n";
      if (auto kids = children_.find(scope); kids != children_.end())
        for (const std::string& k : kids->second)
          if (!boxed(k, expanded) && holds(k)) emit(k, depth + 1);
      os << indent << "}\n";
    };
    if (auto top = children_.find(""); top != children_.end())
      for (const std::string& s : top->second)
        if (!boxed(s, expanded) && holds(s)) emit(s, 1);
  }
  std::set<std::pair<std::string, std::string>> edges;
  for (const auto& [tail, head] : graph_.edges) {
    std::string t = visibleItem(tail, expanded), h = visibleItem(head, expanded);
    if (t != h && edges.insert({t, h}).second) os << "  " << dotQuote(t) << " -> " << dotQuote(h) << ";\n";
  }
  os << "}\n";
  return os.str();
}

std::vector<std::string> ScopeFolding::find(const std::string& text) const {
  std::vector<std::string> hits;
  if (text.empty()) return hits;
  std::string want = lower(text);
  for (const DotNode& n : graph_.nodes) {
    std::string kernel;
    if (auto it = clusterLabel_.find(n.cluster); kernelClusters_ && it != clusterLabel_.end()) kernel = it->second;
    for (const std::string* field : std::initializer_list<const std::string*>{&n.name, &n.label, &n.tooltip, &placement(n.name), &kernel})
      if (lower(*field).find(want) != std::string::npos) {
        hits.push_back(n.name);
        break;
      }
  }
  return hits;
}

}  // namespace fusebox

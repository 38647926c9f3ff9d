#include "report/dot_sanitizer.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "report/html_escape.h"

namespace fusebox {

namespace {

// ---- the scan before parsing ------------------------------------------------------------------

enum class Tok { Id, Open, Close, Edge, Other, End };

// A minimal dot tokenizer: enough to see edge operators, braces and the words around them.
class Scanner {
public:
  explicit Scanner(const std::string& s) : s_(s) {}
  Tok next(std::string* word) {
    skipSpaceAndComments();
    if (i_ >= s_.size()) return Tok::End;
    char c = s_[i_];
    if (c == '{') return ++i_, Tok::Open;
    if (c == '}') return ++i_, Tok::Close;
    if (c == '-' && i_ + 1 < s_.size() && (s_[i_ + 1] == '>' || s_[i_ + 1] == '-')) return i_ += 2, Tok::Edge;
    if (c == '"') {
      for (++i_; i_ < s_.size() && s_[i_] != '"'; ++i_)
        if (s_[i_] == '\\') ++i_;
      ++i_;
      return Tok::Id;
    }
    if (c == '<') {  // an HTML-like string: balanced angle brackets
      int depth = 0;
      for (; i_ < s_.size(); ++i_) {
        if (s_[i_] == '<') ++depth;
        if (s_[i_] == '>' && --depth == 0) break;
      }
      ++i_;
      return Tok::Id;
    }
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || static_cast<unsigned char>(c) >= 0x80) {
      size_t start = i_;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == '.' ||
                                static_cast<unsigned char>(s_[i_]) >= 0x80))
        ++i_;
      if (i_ == start) ++i_;  // a lone '-'
      if (word) *word = s_.substr(start, i_ - start);
      return Tok::Id;
    }
    ++i_;
    return Tok::Other;
  }

private:
  void skipSpaceAndComments() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i_;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '/') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else if (c == '#' && (i_ == 0 || s_[i_ - 1] == '\n')) {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '*') {
        size_t end = s_.find("*/", i_ + 2);
        i_ = end == std::string::npos ? s_.size() : end + 2;
      } else {
        return;
      }
    }
  }
  const std::string& s_;
  size_t i_ = 0;
};

bool isSubgraphWord(const std::string& w) {
  if (w.size() != 8) return false;
  for (size_t i = 0; i < 8; ++i)
    if (std::tolower(static_cast<unsigned char>(w[i])) != "subgraph"[i]) return false;
  return true;
}

// ---- rebuilding from the parsed graph --------------------------------------------------------

std::string attr(void* obj, const char* name) {
  char* v = agget(obj, const_cast<char*>(name));
  return v ? v : "";
}

// A dot string literal of `s` (at most `max` bytes of it, valid UTF-8, no control characters).
// Backslashes survive only as the escapes Graphviz expands harmlessly in labels (\n \l \r, and \N
// \G \E \T \H \L, which insert the object's own, escaped, names); any other backslash becomes '/',
// so no backslash can ever stand before a quote the literal relies on.
std::string quoted(const std::string& raw, size_t max, bool escapes) {
  std::string s = validUtf8(raw.substr(0, max));
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\\') {
      if (escapes && i + 1 < s.size() && std::strchr("nlrNGETHL", s[i + 1]) && s[i + 1] != '\0') {
        out += c;
        out += s[++i];
      } else {
        out += '/';
      }
    } else if (c == '"') {
      out += "\\\"";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += c == '\n' ? "\\n" : " ";
    } else {
      out += c;
    }
  }
  return out + "\"";
}

bool isColor(const std::string& c) {
  if (c.size() == 7 || c.size() == 9) {
    if (c[0] != '#') return false;
    for (size_t i = 1; i < c.size(); ++i)
      if (!std::isxdigit(static_cast<unsigned char>(c[i]))) return false;
    return true;
  }
  if (c.empty() || c.size() > 24) return false;
  for (char ch : c)
    if (!std::islower(static_cast<unsigned char>(ch)) && !std::isdigit(static_cast<unsigned char>(ch))) return false;
  return true;
}

bool isShape(const std::string& s) {
  static const std::set<std::string> ok = {"box", "rect", "rectangle", "ellipse", "oval", "circle", "plaintext", "plain",
                                           "none", "diamond", "hexagon", "octagon", "note", "box3d"};
  return ok.count(s) > 0;
}

bool isStyle(const std::string& s) {  // a comma-separated list of plain styles, "" included
  static const std::set<std::string> ok = {"rounded", "filled", "dashed", "dotted", "bold", "solid"};
  size_t start = 0;
  if (s.size() > 64) return false;
  while (start <= s.size() && !s.empty()) {
    size_t end = s.find(',', start);
    std::string part = s.substr(start, end == std::string::npos ? std::string::npos : end - start);
    while (!part.empty() && part.front() == ' ') part.erase(part.begin());
    while (!part.empty() && part.back() == ' ') part.pop_back();
    if (!ok.count(part)) return false;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return true;
}

// The number of virtual nodes the dot engine adds for edges that span several ranks, estimated
// from a longest-path ranking (cycles broken where a depth-first search finds them). The optimal
// ranking dot computes is no longer in total, so this bounds its work from above; long edges, not
// nodes, are what makes a small graph take minutes (a 1,500-node chain with fan-out edges from
// its head: 375,000 virtual nodes, > 2 minutes and 1.2 GB).
int64_t estimateVirtualNodes(Agraph_t* g) {
  std::vector<Agnode_t*> order;  // reverse post-order of the DFS: a topological order without back edges
  std::map<Agnode_t*, int> state;  // 1 on the stack, 2 done
  std::set<Agedge_t*> back;
  for (Agnode_t* root = agfstnode(g); root; root = agnxtnode(g, root)) {
    if (state[root]) continue;
    std::vector<std::pair<Agnode_t*, Agedge_t*>> stack{{root, agfstout(g, root)}};
    state[root] = 1;
    while (!stack.empty()) {
      auto& [n, e] = stack.back();
      if (!e) {
        state[n] = 2;
        order.push_back(n);
        stack.pop_back();
        continue;
      }
      Agedge_t* cur = e;
      e = agnxtout(g, e);
      Agnode_t* h = aghead(cur);
      if (state[h] == 1) back.insert(cur);
      else if (!state[h]) {
        state[h] = 1;
        stack.push_back({h, agfstout(g, h)});
      }
    }
  }
  std::map<Agnode_t*, int64_t> rank;
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    for (Agedge_t* e = agfstout(g, *it); e; e = agnxtout(g, e))
      if (!back.count(e)) rank[aghead(e)] = std::max(rank[aghead(e)], rank[*it] + 1);
  int64_t total = 0;
  for (Agnode_t* n = agfstnode(g); n; n = agnxtnode(g, n))
    for (Agedge_t* e = agfstout(g, n); e; e = agnxtout(g, e)) {
      int64_t span = rank[aghead(e)] - rank[n];
      total += std::max<int64_t>(0, (span < 0 ? -span : span) - 1);
    }
  return total;
}

class Rebuilder {
public:
  Rebuilder(Agraph_t* g, const LayoutLimits& l) : g_(g), l_(l) {}

  std::string run() {
    int nodes = agnnodes(g_), edges = agnedges(g_);
    if (nodes > l_.maxNodes)
      throw GraphTooLarge(nodes, "too large to lay out: " + std::to_string(nodes) + " nodes > limit " + std::to_string(l_.maxNodes));
    if (edges > l_.maxEdges)
      throw GraphTooLarge(nodes, "too large to lay out: " + std::to_string(edges) + " edges > limit " + std::to_string(l_.maxEdges));
    int64_t spans = estimateVirtualNodes(g_);
    if (spans > l_.maxEdgeSpan)
      throw GraphTooLarge(nodes, "too complex to lay out: edges spanning " + std::to_string(spans) + " ranks in all > limit " +
                                     std::to_string(l_.maxEdgeSpan));
    bool directed = agisdirected(g_);
    std::string rankdir = attr(g_, "rankdir");
    if (rankdir != "LR" && rankdir != "BT" && rankdir != "RL") rankdir = "TB";
    // Past this size Graphviz's own iteration limits bound the network-simplex passes (positions
    // with many long edges from one node otherwise take minutes even for 300 nodes).
    std::string bounded = nodes + spans > 20000 ? "  nslimit=4; mclimit=0.5;\n" : "";
    out_ = std::string(directed ? "digraph " : "graph ") + quoted(agnameof(g_), l_.maxLabelBytes, false) + " {\n" + bounded + "  rankdir=" + rankdir +
           ";\n  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", fontname=\"Helvetica\", fontsize=10];\n"
           "  edge [color=\"#555555\", arrowsize=0.6];\n";
    for (Agnode_t* n = agfstnode(g_); n; n = agnxtnode(g_, n)) node(n);
    clusters(g_, 1);
    const char* op = directed ? " -> " : " -- ";
    for (Agnode_t* n = agfstnode(g_); n; n = agnxtnode(g_, n))
      for (Agedge_t* e = agfstout(g_, n); e; e = agnxtout(g_, e))
        out_ += "  " + name(agtail(e)) + op + name(aghead(e)) + ";\n";
    return out_ + "}\n";
  }

private:
  std::string name(Agnode_t* n) { return quoted(agnameof(n), l_.maxLabelBytes, false); }

  void node(Agnode_t* n) {
    char* label = agget(n, const_cast<char*>("label"));  // undeclared: Graphviz shows the name
    out_ += "  " + name(n) + " [label=" + quoted(label ? label : "\\N", l_.maxLabelBytes, true);
    std::string tooltip = attr(n, "tooltip");
    if (!tooltip.empty()) out_ += ", tooltip=" + quoted(tooltip, l_.maxLabelBytes, true);
    std::string fill = attr(n, "fillcolor"), shape = attr(n, "shape"), style = attr(n, "style");
    if (isColor(fill)) out_ += ", fillcolor=\"" + fill + "\"";
    if (isShape(shape)) out_ += ", shape=" + shape;
    if (isStyle(style)) out_ += ", style=\"" + style + "\"";
    out_ += "];\n";
  }

  // Clusters (subgraphs named cluster*) keep their nesting, label and colour; other subgraphs are
  // looked through. Each node is placed in the first, innermost cluster that holds it.
  void clusters(Agraph_t* parent, int depth) {
    if (depth > 32) throw LayoutError("clusters nested more than 32 deep");
    for (Agraph_t* sg = agfstsubg(parent); sg; sg = agnxtsubg(sg)) {
      std::string sgName = agnameof(sg);
      bool cluster = sgName.compare(0, 7, "cluster") == 0;
      if (!cluster) {
        clusters(sg, depth + 1);
        continue;
      }
      if (++clusterCount_ > l_.maxNodes) throw GraphTooLarge(agnnodes(g_), "too large to lay out: more clusters than nodes allowed");
      std::string indent(2 * static_cast<size_t>(depth), ' ');
      out_ += indent + "subgraph " + quoted(sgName, l_.maxLabelBytes, false) + " {\n" + indent + "  label=" +
              quoted(attr(sg, "label"), l_.maxLabelBytes, true) + ";";
      std::string color = attr(sg, "color"), style = attr(sg, "style");
      if (isColor(color)) out_ += " color=\"" + color + "\";";
      if (isStyle(style)) out_ += " style=\"" + style + "\";";
      out_ += " fontname=\"Helvetica\"; fontsize=10;\n";
      clusters(sg, depth + 1);
      for (Agnode_t* n = agfstnode(sg); n; n = agnxtnode(sg, n))
        if (placed_.insert(n).second) out_ += indent + "  " + name(n) + ";\n";
      out_ += indent + "}\n";
    }
  }

  Agraph_t* g_;
  const LayoutLimits& l_;
  std::string out_;
  std::set<Agnode_t*> placed_;
  int clusterCount_ = 0;
};

}  // namespace

void prescanDot(const std::string& dot, const LayoutLimits& l) {
  if (dot.size() > l.maxDotBytes)
    throw GraphTooLarge(-1, "too large to lay out: " + std::to_string(dot.size()) + " bytes of dot > limit " + std::to_string(l.maxDotBytes));
  Scanner scan(dot);
  std::string word, prevWord;
  Tok prev = Tok::End;
  int edges = 0, depth = 0;
  bool afterEdge = false;
  for (Tok t; (t = scan.next(&word)) != Tok::End; prev = t, prevWord = t == Tok::Id ? word : "") {
    if (t == Tok::Open && ++depth > 64) throw LayoutError("Graphviz cannot read the graph: braces nested more than 64 deep");
    if (t == Tok::Close) --depth;
    if (t == Tok::Edge) {
      if (++edges > l.maxEdges)
        throw GraphTooLarge(-1, "too large to lay out: more than " + std::to_string(l.maxEdges) + " edge statements");
      if (prev == Tok::Close) throw LayoutError("Graphviz input refused: an edge from a subgraph (only node -> node edges are drawn)");
      afterEdge = true;
      continue;
    }
    if (afterEdge && (t == Tok::Open || (t == Tok::Id && isSubgraphWord(word))))
      throw LayoutError("Graphviz input refused: an edge to a subgraph (only node -> node edges are drawn)");
    afterEdge = false;
    word.clear();
  }
}

std::string rebuildDot(Agraph_t* g, const LayoutLimits& limits) { return Rebuilder(g, limits).run(); }

}  // namespace fusebox

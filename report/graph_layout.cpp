#include "report/graph_layout.h"

#include "report/dot_sanitizer.h"

#include <gvc.h>

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>

namespace fusebox {

namespace {

// Graphviz keeps global state: one layout at a time, from any thread.
std::mutex& graphvizMutex() {
  static std::mutex m;
  return m;
}

// One Graphviz context for the process, never freed: freeing one leaves a font name cached by the
// text-size code dangling (a use-after-free in Graphviz 2.42 that ASan reports on the second
// layout of a process, found by fuzz_session_report).
GVC_t* context() {
  static GVC_t* gvc = gvContext();
  return gvc;
}

std::string lastError;
int collectError(char* message) {
  if (lastError.size() < 2000) lastError += std::string(message).substr(0, 2000 - lastError.size());
  return 0;
}

// Parses dot text into a graph the caller closes (agclose); throws LayoutError with Graphviz's
// message. Under the lock.
Agraph_t* readLocked(const std::string& dot) {
  lastError.clear();
  agseterr(AGMAX);  // errors go to collectError only
  agseterrf(collectError);
  Agraph_t* g = agmemread(dot.c_str());
  if (!g) throw LayoutError("Graphviz cannot read the graph: " + (lastError.empty() ? std::string("syntax error") : lastError));
  return g;
}

struct CloseGraph {
  Agraph_t* g;
  ~CloseGraph() { agclose(g); }
};

// Parses `dot` (after the scan that bounds it) and rebuilds it as safe dot text. Under the lock.
std::string sanitizeLocked(const std::string& dot, const LayoutLimits& limits) {
  prescanDot(dot, limits);
  CloseGraph g{readLocked(dot)};
  return rebuildDot(g.g, limits);
}

// Bounds, rebuilds, parses and lays out `dot`; `use` reads the laid-out graph; everything is
// freed afterwards.
template <class F>
auto withLayout(const std::string& untrusted, const LayoutLimits& limits, F use) {
  std::lock_guard<std::mutex> lock(graphvizMutex());
  std::string dot = sanitizeLocked(untrusted, limits);
  GVC_t* gvc = context();
  Agraph_t* g = readLocked(dot);
  if (gvLayout(gvc, g, "dot") != 0) {
    agclose(g);
    throw LayoutError("Graphviz layout failed: " + lastError);
  }
  struct Cleanup {
    GVC_t* gvc;
    Agraph_t* g;
    ~Cleanup() {
      gvFreeLayout(gvc, g);
      agclose(g);
    }
  } cleanup{gvc, g};
  return use(gvc, g);
}

std::string attr(void* obj, const char* name) {
  char* v = agget(obj, const_cast<char*>(name));
  return v ? v : "";
}

// Dot escapes in labels ("\n", "\l", "\r") become line breaks.
std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == 'n' || s[i + 1] == 'l' || s[i + 1] == 'r')) {
      out += '\n';
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

void addClusters(Agraph_t* g, double top, GraphLayout& out) {
  for (int i = 1; i <= GD_n_cluster(g); ++i) {
    Agraph_t* c = GD_clust(g)[i];
    boxf bb = GD_bb(c);
    out.clusters.push_back({agnameof(c), unescape(attr(c, "label")), attr(c, "color"), bb.LL.x, top - bb.UR.y, bb.UR.x, top - bb.LL.y});
    addClusters(c, top, out);
  }
}

}  // namespace

std::string sanitizeDot(const std::string& dot, const LayoutLimits& limits) {
  std::lock_guard<std::mutex> lock(graphvizMutex());
  return sanitizeLocked(dot, limits);
}

GraphLayout layoutDot(const std::string& dot, const LayoutLimits& limits) {
  return withLayout(dot, limits, [](GVC_t*, Agraph_t* g) {
    GraphLayout out;
    boxf bb = GD_bb(g);
    double top = bb.UR.y;
    out.width = bb.UR.x - bb.LL.x;
    out.height = bb.UR.y - bb.LL.y;
    for (Agnode_t* n = agfstnode(g); n; n = agnxtnode(g, n)) {
      LayoutNode ln;
      ln.name = agnameof(n);
      std::string label = attr(n, "label");
      ln.label = label.empty() || label == "\\N" ? ln.name : unescape(label);
      ln.tooltip = unescape(attr(n, "tooltip"));
      ln.fill = attr(n, "fillcolor");
      ln.shape = attr(n, "shape");
      ln.x = ND_coord(n).x;
      ln.y = top - ND_coord(n).y;
      ln.width = ND_width(n) * 72;
      ln.height = ND_height(n) * 72;
      out.nodes.push_back(std::move(ln));
      for (Agedge_t* e = agfstout(g, n); e; e = agnxtout(g, e)) {
        LayoutEdge le{agnameof(agtail(e)), agnameof(aghead(e)), {}};
        if (splines* spl = ED_spl(e))
          for (int b = 0; b < spl->size; ++b) {
            for (int i = 0; i < spl->list[b].size; ++i) le.points.emplace_back(spl->list[b].list[i].x, top - spl->list[b].list[i].y);
            if (spl->list[b].eflag) {
              le.arrow = true;
              le.arrowX = spl->list[b].ep.x;
              le.arrowY = top - spl->list[b].ep.y;
            }
          }
        out.edges.push_back(std::move(le));
      }
    }
    addClusters(g, top, out);
    return out;
  });
}

namespace {

void readClusters(Agraph_t* parent, const std::string& parentName, DotGraph& out, std::set<Agnode_t*>& placed) {
  for (Agraph_t* sg = agfstsubg(parent); sg; sg = agnxtsubg(sg)) {
    std::string name = agnameof(sg);
    bool cluster = name.compare(0, 7, "cluster") == 0;
    if (cluster) out.clusters.push_back({name, unescape(attr(sg, "label")), attr(sg, "color"), parentName});
    readClusters(sg, cluster ? name : parentName, out, placed);
    if (!cluster) continue;
    for (Agnode_t* n = agfstnode(sg); n; n = agnxtnode(sg, n))
      if (placed.insert(n).second)
        for (DotNode& d : out.nodes)
          if (d.name == agnameof(n)) d.cluster = name;
  }
}

}  // namespace

DotGraph parseDot(const std::string& untrusted, const LayoutLimits& limits) {
  std::lock_guard<std::mutex> lock(graphvizMutex());
  std::string dot = sanitizeLocked(untrusted, limits);
  CloseGraph closer{readLocked(dot)};
  Agraph_t* g = closer.g;
  DotGraph out;
  out.name = agnameof(g);
  for (Agnode_t* n = agfstnode(g); n; n = agnxtnode(g, n)) {
    std::string label = attr(n, "label");
    out.nodes.push_back({agnameof(n), label.empty() || label == "\\N" ? agnameof(n) : unescape(label), unescape(attr(n, "tooltip")),
                         attr(n, "fillcolor"), attr(n, "shape"), ""});
  }
  for (Agnode_t* n = agfstnode(g); n; n = agnxtnode(g, n))
    for (Agedge_t* e = agfstout(g, n); e; e = agnxtout(g, e)) out.edges.emplace_back(agnameof(agtail(e)), agnameof(aghead(e)));
  std::set<Agnode_t*> placed;
  readClusters(g, "", out, placed);
  return out;
}

namespace {

// Fields are tab-separated; tabs, newlines and backslashes inside strings are escaped.
std::string field(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '\t') out += "\\t";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string unfield(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    char c = s[++i];
    out += c == 't' ? '\t' : c == 'n' ? '\n' : c;
  }
  return out;
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= line.size(); ++i)
    if (i == line.size() || line[i] == '\t') {
      parts.push_back(line.substr(start, i - start));
      start = i + 1;
    }
  return parts;
}

}  // namespace

std::string serializeLayout(const GraphLayout& l) {
  std::ostringstream os;
  os.precision(17);  // exact round trip of doubles
  os << "fusebox-layout 2\t" << l.width << "\t" << l.height << "\n";
  for (const LayoutNode& n : l.nodes)
    os << "N\t" << field(n.name) << "\t" << field(n.label) << "\t" << field(n.tooltip) << "\t" << field(n.fill) << "\t" << field(n.shape)
       << "\t" << n.x << "\t" << n.y << "\t" << n.width << "\t" << n.height << "\n";
  for (const LayoutEdge& e : l.edges) {
    os << "E\t" << field(e.tail) << "\t" << field(e.head) << "\t" << (e.arrow ? 1 : 0) << "\t" << e.arrowX << "\t" << e.arrowY;
    for (const auto& [x, y] : e.points) os << "\t" << x << "\t" << y;
    os << "\n";
  }
  for (const LayoutCluster& c : l.clusters)
    os << "C\t" << field(c.name) << "\t" << field(c.label) << "\t" << field(c.color) << "\t" << c.x0 << "\t" << c.y0 << "\t" << c.x1
       << "\t" << c.y1 << "\n";
  return os.str();
}

GraphLayout parseLayout(const std::string& text) {
  GraphLayout l;
  std::istringstream in(text);
  std::string line;
  try {
    if (!std::getline(in, line)) throw LayoutError("empty layout");
    auto head = split(line);
    if (head.size() != 3 || head[0] != "fusebox-layout 2") throw LayoutError("not a Fusebox layout (or one from an older version)");
    l.width = std::stod(head[1]);
    l.height = std::stod(head[2]);
    while (std::getline(in, line)) {
      auto f = split(line);
      if (f[0] == "N" && f.size() == 10) {
        l.nodes.push_back({unfield(f[1]), unfield(f[2]), unfield(f[3]), unfield(f[4]), unfield(f[5]), std::stod(f[6]), std::stod(f[7]),
                           std::stod(f[8]), std::stod(f[9])});
      } else if (f[0] == "E" && f.size() >= 6 && f.size() % 2 == 0) {
        LayoutEdge e{unfield(f[1]), unfield(f[2]), {}, f[3] == "1", std::stod(f[4]), std::stod(f[5])};
        for (size_t i = 6; i + 1 < f.size(); i += 2) e.points.emplace_back(std::stod(f[i]), std::stod(f[i + 1]));
        l.edges.push_back(std::move(e));
      } else if (f[0] == "C" && f.size() == 8) {
        l.clusters.push_back({unfield(f[1]), unfield(f[2]), unfield(f[3]), std::stod(f[4]), std::stod(f[5]), std::stod(f[6]), std::stod(f[7])});
      } else {
        throw LayoutError("malformed layout line: " + line.substr(0, 80));
      }
    }
  } catch (const std::invalid_argument&) {
    throw LayoutError("malformed number in a cached layout");
  } catch (const std::out_of_range&) {
    throw LayoutError("malformed number in a cached layout");
  }
  return l;
}

std::string dotHash(const std::string& dot) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : dot) h = (h ^ c) * 1099511628211ull;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%zu-%016llx", dot.size(), static_cast<unsigned long long>(h));
  return buf;
}

std::string renderSvg(const std::string& dot, const LayoutLimits& limits) {
  return withLayout(dot, limits, [](GVC_t* gvc, Agraph_t* g) {
    char* data = nullptr;
    unsigned int length = 0;
    if (gvRenderData(gvc, g, "svg", &data, &length) != 0 || !data) throw LayoutError("Graphviz cannot render SVG");
    std::string svg(data, length);
    gvFreeRenderData(data);
    return svg;
  });
}

}  // namespace fusebox

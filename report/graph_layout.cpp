#include "report/graph_layout.h"

#include <gvc.h>

#include <mutex>

namespace fusebox {

namespace {

// Graphviz keeps global state: one layout at a time, from any thread.
std::mutex& graphvizMutex() {
  static std::mutex m;
  return m;
}

std::string lastError;
int collectError(char* message) {
  lastError += message;
  return 0;
}

// Parses and lays out `dot`; `use` reads the laid-out graph; everything is freed afterwards.
template <class F>
auto withLayout(const std::string& dot, F use) {
  std::lock_guard<std::mutex> lock(graphvizMutex());
  lastError.clear();
  agseterr(AGMAX);  // errors go to collectError only
  agseterrf(collectError);
  GVC_t* gvc = gvContext();
  Agraph_t* g = agmemread(dot.c_str());
  if (!g) {
    gvFreeContext(gvc);
    throw LayoutError("Graphviz cannot read the graph: " + (lastError.empty() ? std::string("syntax error") : lastError));
  }
  if (gvLayout(gvc, g, "dot") != 0) {
    agclose(g);
    gvFreeContext(gvc);
    throw LayoutError("Graphviz layout failed: " + lastError);
  }
  struct Cleanup {
    GVC_t* gvc;
    Agraph_t* g;
    ~Cleanup() {
      gvFreeLayout(gvc, g);
      agclose(g);
      gvFreeContext(gvc);
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

GraphLayout layoutDot(const std::string& dot) {
  return withLayout(dot, [](GVC_t*, Agraph_t* g) {
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
          for (int b = 0; b < spl->size; ++b)
            for (int i = 0; i < spl->list[b].size; ++i) le.points.emplace_back(spl->list[b].list[i].x, top - spl->list[b].list[i].y);
        out.edges.push_back(std::move(le));
      }
    }
    addClusters(g, top, out);
    return out;
  });
}

std::string renderSvg(const std::string& dot) {
  return withLayout(dot, [](GVC_t* gvc, Agraph_t* g) {
    char* data = nullptr;
    unsigned int length = 0;
    if (gvRenderData(gvc, g, "svg", &data, &length) != 0 || !data) throw LayoutError("Graphviz cannot render SVG");
    std::string svg(data, length);
    gvFreeRenderData(data);
    return svg;
  });
}

}  // namespace fusebox

// Graphviz layout in process (libgvc / cgraph, the `dot` engine): a dot text becomes either an
// SVG (for reports) or a GraphLayout with positions (for the GUI's graph view, which draws it
// itself). No Qt here, so the CLI's reports use it too.
//
// The dot text may come from a session file of anyone's, so it is never laid out as given: it is
// bounded (LayoutLimits) and rebuilt from checked parts first (dot_sanitizer.h): no links, images,
// file references or layout parameters reach Graphviz, and a huge graph is refused with
// GraphTooLarge before any layout work.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/error.h"

namespace fusebox {

class LayoutError : public Error {
public:
  using Error::Error;
};

// Refused before layout: "too large to lay out: 6000 nodes > limit 5000".
class GraphTooLarge : public LayoutError {
public:
  GraphTooLarge(int nodes, const std::string& message) : LayoutError(message), nodes_(nodes) {}
  int nodes() const { return nodes_; }  // -1 when refused before counting (dot size, edges)

private:
  int nodes_;
};

// The dot engine's time grows faster than linearly in nodes and, above all, in long edges (the
// virtual nodes it adds per rank an edge crosses). Measured with Graphviz 2.42 on a shared 2-core
// machine: graphs shaped like Fusebox's stages, 1,000 nodes 0.6 s, 2,000 2 s, 3,000 6.7 s, 4,000
// 17 s; the 60-block training graph of the GUI test (3,015 nodes, ~275,000 virtual by the estimate
// in dot_sanitizer.cpp) 28-36 s under load; a 1,500-node chain with 500 fan-out edges from its
// head (375,000) more than 2 minutes and 1.2 GB. maxEdgeSpan keeps the GUI test's graph and refuses
// that one. Reports use a lower node limit of their own (ReportOptions::maxDrawnNodes).
struct LayoutLimits {
  size_t maxDotBytes = 8u << 20;
  int maxNodes = 5000;
  int maxEdges = 20000;
  int64_t maxEdgeSpan = 300000;  // estimated virtual nodes for long edges (dot_sanitizer.cpp)
  size_t maxLabelBytes = 1000;  // longer labels and tooltips are cut
};

struct LayoutNode {
  std::string name;     // the dot node name ("n12", "v3", "l4", ...)
  std::string label;
  std::string tooltip;
  std::string fill;     // "#rrggbb" or empty
  std::string shape;    // "box", "ellipse", "plaintext"
  double x = 0, y = 0;  // centre, points, y down
  double width = 0, height = 0;
};

struct LayoutEdge {
  std::string tail, head;
  std::vector<std::pair<double, double>> points;  // cubic B-spline control points, y down
  bool arrow = false;                             // the arrowhead's tip, where Graphviz drew one
  double arrowX = 0, arrowY = 0;
};

struct LayoutCluster {
  std::string name, label, color;
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // y down
};

struct GraphLayout {
  double width = 0, height = 0;
  std::vector<LayoutNode> nodes;
  std::vector<LayoutEdge> edges;
  std::vector<LayoutCluster> clusters;
};

GraphLayout layoutDot(const std::string& dot, const LayoutLimits& limits = {});

// A graph's parts before layout, read from (bounded, rebuilt) dot text: what the inspector folds
// by module scope (graph_fold.h) and searches. Nodes are in the order of the text.
struct DotNode {
  std::string name, label, tooltip, fill, shape;
  std::string cluster;  // the innermost cluster holding it ("" at top level)
};
struct DotCluster {
  std::string name, label, color;
  std::string parent;  // "" at top level
};
struct DotGraph {
  std::string name;
  std::vector<DotNode> nodes;
  std::vector<std::pair<std::string, std::string>> edges;  // tail, head
  std::vector<DotCluster> clusters;
};
DotGraph parseDot(const std::string& dot, const LayoutLimits& limits = {});

// A layout as text and back (for the session's layout cache); parseLayout throws LayoutError on
// text it did not write.
std::string serializeLayout(const GraphLayout& l);
GraphLayout parseLayout(const std::string& text);
// A key for the cache: the dot text's size and FNV-1a hash.
std::string dotHash(const std::string& dot);
std::string renderSvg(const std::string& dot, const LayoutLimits& limits = {});
// The dot text Graphviz actually lays out for `dot` (bounded and rebuilt; see above).
std::string sanitizeDot(const std::string& dot, const LayoutLimits& limits = {});

}  // namespace fusebox

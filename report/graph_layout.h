// Graphviz layout in process (libgvc / cgraph, the `dot` engine): a dot text becomes either an
// SVG (for reports) or a GraphLayout with positions (for the GUI's graph view, which draws it
// itself). No Qt here, so the CLI's reports use it too.
#pragma once

#include <string>
#include <vector>

#include "core/ir/error.h"

namespace fusebox {

class LayoutError : public Error {
public:
  using Error::Error;
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

GraphLayout layoutDot(const std::string& dot);

// A layout as text and back (for the session's layout cache); parseLayout throws LayoutError on
// text it did not write.
std::string serializeLayout(const GraphLayout& l);
GraphLayout parseLayout(const std::string& text);
// A key for the cache: the dot text's size and FNV-1a hash.
std::string dotHash(const std::string& dot);
std::string renderSvg(const std::string& dot);

}  // namespace fusebox

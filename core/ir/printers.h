// Text, JSON and Graphviz-dot renderings of a graph.
#pragma once

#include <functional>
#include <string>

#include "core/ir/graph.h"

namespace fusebox {

// One line per node: "%h: f32[B, 256] = linear(%x, %fc1.weight, %fc1.bias)  # n3 fc1 @mlp.fbx:5:7"
std::string printText(const Graph& g);

// Every value, node (with attributes, provenance, scope, location) and output, as one JSON object.
std::string printJson(const Graph& g);

struct DotOptions {
  // Fill color of a node's box, e.g. by op kind; empty string leaves the default.
  std::function<std::string(const Node&)> fillColor;
  bool clusterScopes = true;  // draw each top-level module scope as a cluster
};
std::string printDot(const Graph& g, const DotOptions& options = {});
// A Graphviz double-quoted string: '"' and '\\' escaped, "\n" in `s` a centered line break. Every
// printer of dot text (IR graphs, schedules, folded views) quotes with it.
std::string dotQuote(const std::string& s);

}  // namespace fusebox

// A stage graph folded by module scope, the way Model Explorer shows a model: every scope the
// user has not expanded is one box ("layer2 · 38 nodes"), edges between boxes are merged, so a
// real model's top level is a few dozen boxes that Graphviz lays out in milliseconds and that
// read without zoom. Scopes are dotted module paths ("layer2.0.conv1"); each dot-separated
// prefix is a level ("layer2", "layer2.0", "layer2.0.conv1").
//
// Nodes without a recorded scope (a graph's inputs and parameters, a loop program's buffers, the
// outputs of a graph with more than four) are placed in the innermost scope common to the nodes
// they connect to, so a layer's weights fold with it. A scope of a single node is never boxed. No Qt: the GUI folds with it,
// tests check it headless.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "report/graph_layout.h"

namespace fusebox {

class ScopeFolding {
public:
  // `scopes`: node name -> dotted scope ("" or absent: none recorded). `kernelClusters`: the
  // graph's clusters are kernels (kept as drawn) rather than scopes (redrawn by expansion).
  ScopeFolding(DotGraph graph, const std::map<std::string, std::string>& scopes, bool kernelClusters);

  const DotGraph& graph() const { return graph_; }
  // Where a node is placed ("" at top level), after placing unscoped nodes with their neighbours.
  const std::string& placement(const std::string& node) const;
  // Every scope that can be boxed, parents before children.
  const std::vector<std::string>& scopes() const { return scopeOrder_; }
  int depthOf(const std::string& scope) const;  // "layer2" is 1, "layer2.0" 2
  // The graph's nodes inside `scope` at any depth (where they are drawn).
  std::vector<std::string> members(const std::string& scope) const;
  // The nodes whose recorded scope is `scope` or inside it: also a scope of one op, never boxed.
  std::vector<std::string> recordedIn(const std::string& scope) const;

  // The opening view: top-level scopes boxed; a scope holding nothing but one child scope is
  // opened through, so a wrapper module ("model" around "model.transformer") costs no click.
  std::set<std::string> initialExpansion() const;
  // Every scope down to `depth` levels expanded (0: all boxed, a large number: everything).
  std::set<std::string> expansionToDepth(int depth) const;
  // The scopes to expand (added to `expanded`) so that `node` is drawn as itself.
  std::set<std::string> revealing(const std::string& node, std::set<std::string> expanded) const;

  // What is drawn for `node` under `expanded`: the node's own name, or the box name of its
  // outermost collapsed scope.
  std::string visibleItem(const std::string& node, const std::set<std::string>& expanded) const;
  // The scope a box name stands for ("" when `item` is not a box).
  std::string boxScope(const std::string& item) const;
  // The expanded scope a cluster of foldedDot's text draws ("" for a kernel's or an unknown one),
  // and the other way ("" when `scope` is never boxed).
  std::string clusterScope(const std::string& cluster) const;
  std::string clusterOf(const std::string& scope) const;
  // The graph as dot text with every scope not in `expanded` drawn as one box.
  std::string foldedDot(const std::set<std::string>& expanded) const;

  // Nodes whose name, label, tooltip, scope or kernel contains `text` (case-insensitive), in the
  // graph's order.
  std::vector<std::string> find(const std::string& text) const;
  // A one-paragraph summary of a box's contents: node count and the most frequent ops.
  std::string describeScope(const std::string& scope) const;

private:
  bool boxed(const std::string& scope, const std::set<std::string>& expanded) const;
  std::string boxName(const std::string& scope) const;
  // The scope numbered by `name` = prefix + its box number ("" for any other name).
  std::string scopeNumbered(const std::string& name, const std::string& prefix) const;
  void placeUnscopedNodes();

  DotGraph graph_;
  bool kernelClusters_;
  std::map<std::string, std::string> placement_;  // node -> scope it is drawn in
  std::map<std::string, std::string> recorded_;   // node -> the scope its stage recorded
  std::map<std::string, size_t> index_;           // node name -> position in graph_.nodes
  std::vector<std::string> scopeOrder_;
  std::map<std::string, int> scopeId_;            // scope -> its box number
  std::map<std::string, int> memberCount_;        // scope -> nodes inside at any depth
  std::map<std::string, std::set<std::string>> children_;  // scope ("" the root) -> child scopes
  std::map<std::string, std::string> clusterLabel_;        // kernel cluster name -> label
  std::string boxPrefix_ = "scope#";
};

// "layer2.0.conv1" -> {"layer2", "layer2.0", "layer2.0.conv1"}.
std::vector<std::string> scopeLevels(const std::string& scope);
// Whether `scope` is `outer` or inside it ("layer2.0" is in "layer2"; "layer20" is not).
bool inScope(const std::string& scope, const std::string& outer);

}  // namespace fusebox

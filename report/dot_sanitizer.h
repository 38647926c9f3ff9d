// Stored dot text is untrusted (a session file may come from anyone), so it is never laid out as
// it is. Before Graphviz parses it, a cheap scan bounds its size, its edge statements and its
// nesting, and refuses edge statements between subgraphs (`{a b c} -> {d e f}` makes n*m edges
// while parsing). After parsing, the graph is rebuilt as new dot text from the parts Fusebox uses,
// each value checked: node names, labels and tooltips (re-quoted, never HTML-like labels, only
// the \n \l \r \N \G \E \T \H \L escapes), fill and cluster colours (#rrggbb[aa] or a plain colour
// name), a few shapes and styles, clusters and edges. Everything else (URL, href, target, id,
// class, image, stylesheet, fontpath, size, ranksep, ports, records, ...) is dropped, so the SVG
// Graphviz writes has no links, no images and no file references, and the layout's cost is bounded
// by the node and edge counts. Internal to report/ (graph_layout.cpp calls it under its lock).
#pragma once

#include <cgraph.h>

#include <string>

#include "report/graph_layout.h"

namespace fusebox {

// Throws GraphTooLarge or LayoutError before Graphviz sees `dot`.
void prescanDot(const std::string& dot, const LayoutLimits& limits);

// The safe dot text of a parsed graph; throws GraphTooLarge over the limits.
std::string rebuildDot(Agraph_t* g, const LayoutLimits& limits);

}  // namespace fusebox

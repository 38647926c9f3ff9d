// A laid-out graph (GraphLayout from Graphviz) drawn in a QGraphicsView: boxes colored by op kind,
// clusters (module scopes, fused kernels), spline edges; wheel zoom, drag pan, fit, search by op
// name, tooltips, and highlighting of the nodes that share traced origins with a selection.
#pragma once

#include <QGraphicsView>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "report/graph_layout.h"

class QGraphicsRectItem;

namespace fusebox {

class GraphView : public QGraphicsView {
  Q_OBJECT
public:
  explicit GraphView(QWidget* parent = nullptr);

  // `origins`: for each dot node name, the traced node ids it came from.
  void setGraph(const GraphLayout& layout, const std::map<std::string, std::vector<int64_t>>& origins);
  void clearGraph(const QString& message);
  // Highlights every node with an origin in `traced` (others are dimmed); empty clears.
  void highlightOrigins(const std::set<int64_t>& traced);
  // Selects the nodes whose label contains `text`, centres the first; returns how many matched.
  int search(const QString& text);
  void fitAll();
  void fitWidth();  // the initial view: the graph's width, from the top, labels kept legible
  int nodeCount() const { return static_cast<int>(nodes_.size()); }
  int highlightedCount() const { return highlighted_; }
  // The traced origins of a node by its dot name (empty when unknown).
  std::vector<int64_t> originsOf(const std::string& name) const;

signals:
  void nodeClicked(const QString& name);

protected:
  void wheelEvent(QWheelEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;

private:
  struct NodeItem {
    QGraphicsRectItem* box = nullptr;
    std::vector<int64_t> origins;
    QString label;
  };
  std::map<std::string, NodeItem> nodes_;
  int highlighted_ = 0;
};

}  // namespace fusebox

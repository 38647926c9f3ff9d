// A laid-out graph (GraphLayout from Graphviz) drawn in a QGraphicsView: boxes colored by op kind,
// clusters (expanded module scopes, fused kernels), spline edges with arrowheads, a minimap in
// the corner; wheel zoom, drag pan, fit; tooltips; highlighting of the items that share traced
// origins with a selection. What an item is (a node, a folded scope) is the pane's business: the
// view reports clicks, double-clicks and context-menu requests by item and cluster name.
#pragma once

#include <QGraphicsView>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "report/graph_layout.h"

class QGraphicsRectItem;

namespace fusebox {

class Minimap;

class GraphView : public QGraphicsView {
  Q_OBJECT
public:
  explicit GraphView(QWidget* parent = nullptr);

  // `origins`: for each drawn item (dot node name), the traced node ids it stands for.
  void setGraph(const GraphLayout& layout, const std::map<std::string, std::vector<int64_t>>& origins);
  void clearGraph(const QString& message);
  // Highlights every item with an origin in `traced` (others are dimmed) and scrolls to the first
  // one unless it is already in view; empty clears. Returns how many items lit up.
  int highlightOrigins(const std::set<int64_t>& traced);
  // Selects these items and centres the first (unknown names are skipped).
  void selectItems(const std::vector<std::string>& names);
  void centreOn(const std::string& name);  // no-op when unknown
  void showRect(const QRectF& sceneRect);  // centres it, or its top when it does not fit
  void fitAll();
  void fitWidth();  // the initial view: the graph's width, from the top, labels kept legible
  int nodeCount() const { return static_cast<int>(nodes_.size()); }
  int highlightedCount() const { return highlighted_; }
  bool hasItem(const std::string& name) const { return nodes_.count(name) > 0; }
  // Where an item is on screen (viewport coordinates), for tests that click it.
  QPoint viewPointOf(const std::string& name) const;
  bool isInView(const std::string& name) const;
  bool anyHighlightedInView() const;
  std::vector<std::string> selectedItems() const;  // in the scene's order (Ctrl+click adds)
  // The traced origins of an item by its dot name (empty when unknown).
  std::vector<int64_t> originsOf(const std::string& name) const;
  QString labelOf(const std::string& name) const;
  QString tooltipOf(const std::string& name) const;

signals:
  void nodeClicked(const QString& name);
  void nodeDoubleClicked(const QString& name);
  void clusterDoubleClicked(const QString& cluster);
  // A right-click on `item` (empty when on no item) inside `cluster` (empty when in none).
  void contextMenuRequested(const QString& item, const QString& cluster, const QPoint& globalPos);

protected:
  void wheelEvent(QWheelEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;
  void contextMenuEvent(QContextMenuEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;
  void scrollContentsBy(int dx, int dy) override;

private:
  QString itemAt(const QPoint& p) const;     // the node under a viewport point, or empty
  QString clusterAt(const QPoint& p) const;  // the innermost cluster under it, or empty
  void updateMinimap();
  struct NodeItem {
    QGraphicsRectItem* box = nullptr;
    std::vector<int64_t> origins;
    QString label, tooltip;
  };
  std::map<std::string, NodeItem> nodes_;
  QRectF drawnRect_;  // the graph's own part of the scene (the scene adds room for the overview)
  int highlighted_ = 0;
  Minimap* minimap_ = nullptr;
};

}  // namespace fusebox

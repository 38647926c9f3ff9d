#include "views/graph_view.h"

#include <QContextMenuEvent>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QMouseEvent>
#include <QPainterPath>
#include <QScrollBar>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "views/minimap.h"

namespace fusebox {

namespace {
constexpr int kMinimapWidth = 90, kMinimapHeight = 110;  // at most, in viewport pixels
constexpr double kMinimapRoom = kMinimapHeight / 0.8 + 10;  // scene units: at the smallest zoom fitWidth uses
}  // namespace

namespace {
constexpr int kNameRole = 0;     // QGraphicsItem::data key holding a node's dot name
constexpr int kClusterRole = 1;  // ... holding a cluster's dot name

QColor colorOr(const std::string& c, const QColor& fallback) {
  QColor q(QString::fromStdString(c));
  return q.isValid() ? q : fallback;
}

// A filled triangle from the end of an edge's spline to the arrow's tip.
QPainterPath arrowHead(QPointF from, QPointF tip) {
  QPointF d = tip - from;
  double len = std::hypot(d.x(), d.y());
  QPainterPath path;
  if (len < 0.01) return path;
  QPointF n(-d.y() / len * len * 0.45, d.x() / len * len * 0.45);
  path.moveTo(tip);
  path.lineTo(from + n);
  path.lineTo(from - n);
  path.closeSubpath();
  return path;
}
}  // namespace

GraphView::GraphView(QWidget* parent) : QGraphicsView(parent) {
  setScene(new QGraphicsScene(this));
  setDragMode(QGraphicsView::ScrollHandDrag);
  setRenderHint(QPainter::Antialiasing);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
  setBackgroundBrush(QColor("#fcfcfc"));
  minimap_ = new Minimap(scene(), this);
  connect(minimap_, &Minimap::moveTo, this, [this](QPointF p) { centerOn(p); });
}

void GraphView::clearGraph(const QString& message) {
  scene()->clear();
  nodes_.clear();
  highlighted_ = 0;
  auto* t = scene()->addSimpleText(message);
  t->setBrush(QColor("#777777"));
  drawnRect_ = QRectF();
  scene()->setSceneRect(t->boundingRect().adjusted(-20, -20, 20, 20));
  resetTransform();
  minimap_->invalidate();
  updateMinimap();
}

void GraphView::setGraph(const GraphLayout& l, const std::map<std::string, std::vector<int64_t>>& origins) {
  scene()->clear();
  nodes_.clear();
  highlighted_ = 0;
  const bool large = l.nodes.size() > 800;  // cheaper drawing keeps a 3,000-node graph smooth to pan
  setRenderHint(QPainter::Antialiasing, !large);
  QFont small("Helvetica", 8);
  for (const LayoutCluster& c : l.clusters) {
    auto* r = scene()->addRect(QRectF(c.x0, c.y0, c.x1 - c.x0, c.y1 - c.y0), QPen(colorOr(c.color, QColor("#999999")), 1, Qt::DashLine));
    r->setZValue(-2);
    r->setData(kClusterRole, QString::fromStdString(c.name));
    r->setToolTip(QString::fromStdString(c.label) + "\n(double-click inside to collapse)");
    auto* t = scene()->addSimpleText(QString::fromStdString(c.label), small);
    t->setPos(c.x0 + 4, c.y0 + 2);
    t->setBrush(QColor("#555555"));
  }
  QPen edgePen(QColor("#777777"), 0.8);
  for (const LayoutEdge& e : l.edges) {
    if (e.points.size() < 4) continue;
    QPainterPath path(QPointF(e.points[0].first, e.points[0].second));
    for (size_t i = 1; i + 2 < e.points.size(); i += 3)
      path.cubicTo(QPointF(e.points[i].first, e.points[i].second), QPointF(e.points[i + 1].first, e.points[i + 1].second),
                   QPointF(e.points[i + 2].first, e.points[i + 2].second));
    auto* item = scene()->addPath(path, edgePen);
    item->setZValue(-1);
    if (e.arrow) {
      QPointF end(e.points.back().first, e.points.back().second);
      auto* head = scene()->addPath(arrowHead(end, QPointF(e.arrowX, e.arrowY)), QPen(Qt::NoPen), QColor("#666666"));
      head->setZValue(-1);
    }
  }
  for (const LayoutNode& n : l.nodes) {
    QRectF rect(n.x - n.width / 2, n.y - n.height / 2, n.width, n.height);
    auto* box = new QGraphicsRectItem(rect);
    box->setBrush(n.shape == "plaintext" ? QBrush(Qt::NoBrush) : QBrush(colorOr(n.fill, QColor("#ffffff"))));
    box->setPen(n.shape == "plaintext" ? QPen(Qt::NoPen) : QPen(QColor("#555555"), 0.8));
    QString tip = QString::fromStdString(n.tooltip.empty() ? n.label : n.tooltip);
    box->setToolTip(tip);
    box->setData(kNameRole, QString::fromStdString(n.name));
    box->setFlag(QGraphicsItem::ItemIsSelectable);
    scene()->addItem(box);
    auto* text = new QGraphicsSimpleTextItem(QString::fromStdString(n.label), box);
    text->setFont(small);
    QRectF tb = text->boundingRect();
    text->setPos(n.x - tb.width() / 2, n.y - tb.height() / 2);
    auto it = origins.find(n.name);
    nodes_[n.name] = {box, it != origins.end() ? it->second : std::vector<int64_t>{}, QString::fromStdString(n.label), tip};
  }
  // Room below and right of the graph for the overview in the corner: scrolled to the end, the
  // last nodes clear it instead of staying under it.
  drawnRect_ = QRectF(-20, -20, l.width + 40, l.height + 40);
  scene()->setSceneRect(drawnRect_.adjusted(0, 0, kMinimapRoom, kMinimapRoom));
  minimap_->invalidate();
  fitWidth();
}

std::vector<int64_t> GraphView::originsOf(const std::string& name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? std::vector<int64_t>{} : it->second.origins;
}

QString GraphView::labelOf(const std::string& name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? QString() : it->second.label;
}

QString GraphView::tooltipOf(const std::string& name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? QString() : it->second.tooltip;
}

QPoint GraphView::viewPointOf(const std::string& name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? QPoint(-1, -1) : mapFromScene(it->second.box->sceneBoundingRect().center());
}

bool GraphView::isInView(const std::string& name) const {
  auto it = nodes_.find(name);
  return it != nodes_.end() && viewport()->rect().contains(viewPointOf(name));
}

std::vector<std::string> GraphView::selectedItems() const {
  std::vector<std::string> out;
  for (const auto& [name, n] : nodes_)
    if (n.box->isSelected()) out.push_back(name);
  return out;
}

bool GraphView::anyHighlightedInView() const {
  QRectF visible = mapToScene(viewport()->rect()).boundingRect();
  for (const auto& [name, n] : nodes_)
    if (n.box->pen().width() == 3 && visible.intersects(n.box->sceneBoundingRect())) return true;
  return false;
}

int GraphView::highlightOrigins(const std::set<int64_t>& traced) {
  highlighted_ = 0;
  QGraphicsRectItem* first = nullptr;
  bool anyInView = false;
  QRectF visible = mapToScene(viewport()->rect()).boundingRect();
  for (auto& [name, n] : nodes_) {
    bool hit = !traced.empty() && std::any_of(n.origins.begin(), n.origins.end(), [&](int64_t o) { return traced.count(o) > 0; });
    highlighted_ += hit;
    n.box->setPen(hit ? QPen(QColor("#d62728"), 3) : QPen(QColor("#555555"), 0.8));
    n.box->setOpacity(traced.empty() || hit ? 1.0 : 0.55);
    if (hit && (!first || n.box->sceneBoundingRect().top() < first->sceneBoundingRect().top())) first = n.box;
    if (hit && visible.contains(n.box->sceneBoundingRect())) anyInView = true;
  }
  if (first && !anyInView) centerOn(first);
  return highlighted_;
}

void GraphView::selectItems(const std::vector<std::string>& names) {
  scene()->clearSelection();
  QGraphicsRectItem* first = nullptr;
  for (const std::string& name : names) {
    auto it = nodes_.find(name);
    if (it == nodes_.end()) continue;
    it->second.box->setSelected(true);
    if (!first) first = it->second.box;
  }
  if (first) centerOn(first);
}

void GraphView::showRect(const QRectF& r) {
  QRectF seen = mapToScene(viewport()->rect()).boundingRect();
  if (r.width() <= seen.width() && r.height() <= seen.height()) return centerOn(r.center());
  // larger than the view: its top (where a scope's inputs come in), centred across
  centerOn(r.center().x(), r.top() + seen.height() / 2 - 10);
}

void GraphView::centreOn(const std::string& name) {
  if (auto it = nodes_.find(name); it != nodes_.end()) centerOn(it->second.box);
}

void GraphView::fitWidth() {
  QRectF r = drawnRect_.isEmpty() ? scene()->sceneRect() : drawnRect_;
  if (r.isEmpty()) return;
  resetTransform();
  double s = std::min(1.0, viewport()->width() / r.width());
  s = std::max(s, 0.8);  // keep labels legible; wide graphs pan sideways
  scale(s, s);
  centerOn(r.center().x(), r.top() + viewport()->height() / (2 * s));
  updateMinimap();
}

void GraphView::fitAll() {
  if (!scene()->items().isEmpty()) fitInView(drawnRect_.isEmpty() ? scene()->sceneRect() : drawnRect_, Qt::KeepAspectRatio);
  // never zoom in past 1:1 when fitting a small graph
  if (transform().m11() > 1.0) resetTransform();
  updateMinimap();
}

void GraphView::wheelEvent(QWheelEvent* e) {
  double f = e->angleDelta().y() > 0 ? 1.2 : 1 / 1.2;
  scale(f, f);
  updateMinimap();
}

QString GraphView::itemAt(const QPoint& p) const {
  for (QGraphicsItem* item = QGraphicsView::itemAt(p); item; item = item->parentItem())
    if (item->data(kNameRole).isValid()) return item->data(kNameRole).toString();
  return {};
}

QString GraphView::clusterAt(const QPoint& p) const {
  QString best;
  double area = 0;
  for (QGraphicsItem* item : items(p))
    if (item->data(kClusterRole).isValid()) {
      double a = item->boundingRect().width() * item->boundingRect().height();
      if (best.isEmpty() || a < area) best = item->data(kClusterRole).toString(), area = a;
    }
  return best;
}

void GraphView::mousePressEvent(QMouseEvent* e) {
  QString name = itemAt(e->pos());
  if (!name.isEmpty() && e->button() == Qt::LeftButton) emit nodeClicked(name);
  QGraphicsView::mousePressEvent(e);
}

void GraphView::mouseDoubleClickEvent(QMouseEvent* e) {
  QString name = itemAt(e->pos());
  if (!name.isEmpty()) emit nodeDoubleClicked(name);
  else if (QString c = clusterAt(e->pos()); !c.isEmpty()) emit clusterDoubleClicked(c);
  QGraphicsView::mouseDoubleClickEvent(e);
}

void GraphView::contextMenuEvent(QContextMenuEvent* e) { emit contextMenuRequested(itemAt(e->pos()), clusterAt(e->pos()), e->globalPos()); }

void GraphView::resizeEvent(QResizeEvent* e) {
  QGraphicsView::resizeEvent(e);
  updateMinimap();
}

void GraphView::scrollContentsBy(int dx, int dy) {
  QGraphicsView::scrollContentsBy(dx, dy);
  updateMinimap();
}

void GraphView::updateMinimap() {
  if (!minimap_) return;
  QRectF scene = sceneRect(), seen = mapToScene(viewport()->rect()).boundingRect();
  // Only worth its corner when the graph (without the room for it) does not fit the pane.
  QRectF graph = drawnRect_.isEmpty() ? scene : drawnRect_;
  bool needed = !nodes_.empty() && (seen.width() < graph.width() * 0.9 || seen.height() < graph.height() * 0.6);
  minimap_->setVisible(needed);
  if (!needed) return;
  // In the bottom-right corner, where a top-down graph's first nodes are not.
  QSize size(std::min(kMinimapWidth, viewport()->width() / 5), std::min(kMinimapHeight, viewport()->height() / 4));
  minimap_->setGeometry(viewport()->x() + viewport()->width() - size.width() - 4, viewport()->y() + viewport()->height() - size.height() - 4,
                        size.width(), size.height());
  minimap_->showView(scene, seen);
}

}  // namespace fusebox

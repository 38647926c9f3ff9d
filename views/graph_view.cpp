#include "views/graph_view.h"

#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QMouseEvent>
#include <QPainterPath>
#include <QWheelEvent>
#include <algorithm>

namespace fusebox {

namespace {
constexpr int kNameRole = 0;  // QGraphicsItem::data key holding the dot node name

QColor colorOr(const std::string& c, const QColor& fallback) {
  QColor q(QString::fromStdString(c));
  return q.isValid() ? q : fallback;
}
}  // namespace

GraphView::GraphView(QWidget* parent) : QGraphicsView(parent) {
  setScene(new QGraphicsScene(this));
  setDragMode(QGraphicsView::ScrollHandDrag);
  setRenderHint(QPainter::Antialiasing);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
  setBackgroundBrush(QColor("#fcfcfc"));
}

void GraphView::clearGraph(const QString& message) {
  scene()->clear();
  nodes_.clear();
  highlighted_ = 0;
  auto* t = scene()->addSimpleText(message);
  t->setBrush(QColor("#777777"));
  scene()->setSceneRect(t->boundingRect().adjusted(-20, -20, 20, 20));
  resetTransform();
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
  }
  for (const LayoutNode& n : l.nodes) {
    QRectF rect(n.x - n.width / 2, n.y - n.height / 2, n.width, n.height);
    auto* box = new QGraphicsRectItem(rect);
    box->setBrush(n.shape == "plaintext" ? QBrush(Qt::NoBrush) : QBrush(colorOr(n.fill, QColor("#ffffff"))));
    box->setPen(n.shape == "plaintext" ? QPen(Qt::NoPen) : QPen(QColor("#555555"), 0.8));
    box->setToolTip(QString::fromStdString(n.tooltip.empty() ? n.label : n.tooltip));
    box->setData(kNameRole, QString::fromStdString(n.name));
    box->setFlag(QGraphicsItem::ItemIsSelectable);
    scene()->addItem(box);
    auto* text = new QGraphicsSimpleTextItem(QString::fromStdString(n.label), box);
    text->setFont(small);
    QRectF tb = text->boundingRect();
    text->setPos(n.x - tb.width() / 2, n.y - tb.height() / 2);
    auto it = origins.find(n.name);
    nodes_[n.name] = {box, it != origins.end() ? it->second : std::vector<int64_t>{}, QString::fromStdString(n.label)};
  }
  scene()->setSceneRect(QRectF(-20, -20, l.width + 40, l.height + 40));
  fitWidth();
}

std::vector<int64_t> GraphView::originsOf(const std::string& name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? std::vector<int64_t>{} : it->second.origins;
}

void GraphView::highlightOrigins(const std::set<int64_t>& traced) {
  highlighted_ = 0;
  for (auto& [name, n] : nodes_) {
    bool hit = !traced.empty() && std::any_of(n.origins.begin(), n.origins.end(), [&](int64_t o) { return traced.count(o) > 0; });
    highlighted_ += hit;
    n.box->setPen(hit ? QPen(QColor("#d62728"), 3) : QPen(QColor("#555555"), 0.8));
    n.box->setOpacity(traced.empty() || hit ? 1.0 : 0.45);
  }
}

int GraphView::search(const QString& text) {
  scene()->clearSelection();
  int found = 0;
  QGraphicsRectItem* first = nullptr;
  for (auto& [name, n] : nodes_) {
    if (text.isEmpty() || !n.label.contains(text, Qt::CaseInsensitive)) continue;
    n.box->setSelected(true);
    if (!first) first = n.box;
    ++found;
  }
  if (first) centerOn(first);
  return found;
}

void GraphView::fitWidth() {
  QRectF r = scene()->sceneRect();
  if (r.isEmpty()) return;
  resetTransform();
  double s = std::min(1.0, viewport()->width() / r.width());
  s = std::max(s, 0.35);  // keep labels legible; wide graphs pan sideways
  scale(s, s);
  centerOn(r.center().x(), r.top() + viewport()->height() / (2 * s));
}

void GraphView::fitAll() {
  if (!scene()->items().isEmpty()) fitInView(scene()->sceneRect(), Qt::KeepAspectRatio);
  // never zoom in past 1:1 when fitting a small graph
  if (transform().m11() > 1.0) resetTransform();
}

void GraphView::wheelEvent(QWheelEvent* e) {
  double f = e->angleDelta().y() > 0 ? 1.2 : 1 / 1.2;
  scale(f, f);
}

void GraphView::mousePressEvent(QMouseEvent* e) {
  for (QGraphicsItem* item = itemAt(e->pos()); item; item = item->parentItem())
    if (item->data(kNameRole).isValid()) {
      emit nodeClicked(item->data(kNameRole).toString());
      break;
    }
  QGraphicsView::mousePressEvent(e);
}

}  // namespace fusebox

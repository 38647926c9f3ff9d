// The corner overview of a graph view that does not fit its pane (as in Model Explorer and
// Netron): the whole scene in miniature with the visible part outlined; a click or drag moves
// the view there. The miniature is rendered once per graph, not on every scroll.
#pragma once

#include <QGraphicsScene>
#include <QPixmap>
#include <QWidget>

namespace fusebox {

class Minimap : public QWidget {
  Q_OBJECT
public:
  Minimap(QGraphicsScene* scene, QWidget* parent);
  void invalidate() { pixmap_ = QPixmap(); }  // the scene changed: render again when next shown
  // `scene`: the whole scene rectangle; `seen`: the part the view shows.
  void showView(const QRectF& scene, const QRectF& seen);

signals:
  void moveTo(QPointF scenePoint);

protected:
  void paintEvent(QPaintEvent*) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;

private:
  QRectF target() const;  // where the miniature is drawn in this widget, aspect kept
  QPointF toScene(QPointF p) const;
  QGraphicsScene* scene_;
  QPixmap pixmap_;
  QRectF sceneRect_, seen_;
};

}  // namespace fusebox

#include "views/minimap.h"

#include <QMouseEvent>
#include <QPainter>

namespace fusebox {

Minimap::Minimap(QGraphicsScene* scene, QWidget* parent) : QWidget(parent), scene_(scene) {
  setCursor(Qt::PointingHandCursor);
  setToolTip("Overview: click or drag to move the view");
  hide();
}

void Minimap::showView(const QRectF& scene, const QRectF& seen) {
  if (scene != sceneRect_) pixmap_ = QPixmap();
  sceneRect_ = scene;
  seen_ = seen;
  show();
  raise();
  update();
}

QRectF Minimap::target() const {
  if (sceneRect_.isEmpty()) return rect();
  QSizeF s = sceneRect_.size().scaled(QSizeF(width() - 2, height() - 2), Qt::KeepAspectRatio);
  return QRectF(1 + (width() - 2 - s.width()) / 2, 1 + (height() - 2 - s.height()) / 2, s.width(), s.height());
}

QPointF Minimap::toScene(QPointF p) const {
  QRectF t = target();
  if (t.isEmpty()) return sceneRect_.center();
  return {sceneRect_.left() + (p.x() - t.left()) / t.width() * sceneRect_.width(),
          sceneRect_.top() + (p.y() - t.top()) / t.height() * sceneRect_.height()};
}

void Minimap::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setOpacity(0.85);  // the graph under it stays visible
  p.fillRect(rect(), QColor(255, 255, 255, 220));
  p.setPen(QColor("#9aa5b5"));
  p.drawRect(rect().adjusted(0, 0, -1, -1));
  QRectF t = target();
  if (pixmap_.isNull() && scene_ && !t.isEmpty()) {
    pixmap_ = QPixmap(t.size().toSize() * devicePixelRatioF());
    pixmap_.setDevicePixelRatio(devicePixelRatioF());
    pixmap_.fill(Qt::white);
    QPainter pp(&pixmap_);
    scene_->render(&pp, QRectF(QPointF(0, 0), t.size()), sceneRect_);
  }
  if (!pixmap_.isNull()) p.drawPixmap(t.topLeft(), pixmap_);
  if (sceneRect_.isEmpty()) return;
  QRectF box(t.left() + (seen_.left() - sceneRect_.left()) / sceneRect_.width() * t.width(),
             t.top() + (seen_.top() - sceneRect_.top()) / sceneRect_.height() * t.height(), seen_.width() / sceneRect_.width() * t.width(),
             seen_.height() / sceneRect_.height() * t.height());
  p.setPen(QPen(QColor("#d62728"), 1.5));
  p.setBrush(QColor(214, 39, 40, 30));
  p.drawRect(box.intersected(t));
}

void Minimap::mousePressEvent(QMouseEvent* e) { emit moveTo(toScene(e->position())); }
void Minimap::mouseMoveEvent(QMouseEvent* e) {
  if (e->buttons() & Qt::LeftButton) emit moveTo(toScene(e->position()));
}

}  // namespace fusebox

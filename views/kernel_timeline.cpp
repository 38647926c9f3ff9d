#include "views/kernel_timeline.h"

#include <algorithm>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <cmath>

namespace fusebox {

namespace {
constexpr int kLeft = 70, kRight = 10, kBarTop = 8, kBarHeight = 26, kHostHeight = 12, kTrackGap = 10;

bool isExtern(const std::string& kernel) { return kernel.rfind("extern", 0) == 0 || kernel.rfind("cublas", 0) == 0; }
}  // namespace

KernelTimeline::KernelTimeline(QWidget* parent) : QWidget(parent) {
  setMinimumHeight(70);
  setMouseTracking(true);
}

void KernelTimeline::setKernels(const std::vector<KernelTiming>& kernels, const QString& track) {
  kernels_ = kernels;
  track_ = track;
  starts_.clear();
  total_ = 0;
  // Where the run recorded when each kernel began, bars sit there and the gaps are host time
  // (launches, thread wake-ups); otherwise kernels are laid end to end.
  asLaunched_ = !kernels_.empty() && std::all_of(kernels_.begin(), kernels_.end(), [](const KernelTiming& k) { return k.startMs >= 0; });
  hostTrack_ = asLaunched_ && std::all_of(kernels_.begin(), kernels_.end(), [](const KernelTiming& k) { return k.launchMs >= 0; });
  for (const KernelTiming& k : kernels_) {
    starts_.push_back(asLaunched_ ? k.startMs : total_);
    total_ = asLaunched_ ? std::max(total_, k.startMs + k.medianMs) : total_ + k.medianMs;
  }
  setMinimumHeight(hostTrack_ ? 92 : 70);
  updateGeometry();
  selected_ = -1;
  update();
}

void KernelTimeline::setSelected(const QString& graph, const QString& kernel) {
  selected_ = -1;
  for (size_t i = 0; i < kernels_.size(); ++i)
    if (QString::fromStdString(kernels_[i].graph) == graph && QString::fromStdString(kernels_[i].kernel) == kernel) selected_ = static_cast<int>(i);
  update();
}

QRect KernelTimeline::barRect(int i) const {
  if (i < 0 || i >= static_cast<int>(kernels_.size()) || total_ <= 0) return {};
  double w = width() - kLeft - kRight;
  int x0 = kLeft + static_cast<int>(std::floor(starts_[static_cast<size_t>(i)] / total_ * w));
  int x1 = kLeft + static_cast<int>(std::ceil((starts_[static_cast<size_t>(i)] + kernels_[static_cast<size_t>(i)].medianMs) / total_ * w));
  return QRect(x0, gpuTop(), std::max(1, x1 - x0), kBarHeight);
}

int KernelTimeline::gpuTop() const { return hostTrack_ ? kBarTop + kHostHeight + kTrackGap : kBarTop; }
int KernelTimeline::axisTop() const { return gpuTop() + kBarHeight + 6; }

// From the host's launch call to its next one (the host's time per launch), or a sliver for the last.
QRect KernelTimeline::launchRect(int i) const {
  if (!hostTrack_ || i < 0 || i >= static_cast<int>(kernels_.size()) || total_ <= 0) return {};
  double at = kernels_[static_cast<size_t>(i)].launchMs, next = -1;
  for (const KernelTiming& k : kernels_)
    if (k.launchMs > at && (next < 0 || k.launchMs < next)) next = k.launchMs;
  double w = width() - kLeft - kRight;
  int x0 = kLeft + static_cast<int>(std::floor(at / total_ * w)), x1 = next < 0 ? x0 + 2 : kLeft + static_cast<int>(std::ceil(next / total_ * w));
  return QRect(x0, kBarTop, std::max(2, x1 - x0 - 1), kHostHeight);
}

int KernelTimeline::barAt(QPoint p) const {
  for (int i = 0; i < static_cast<int>(kernels_.size()); ++i)
    if (barRect(i).adjusted(0, 0, 1, 0).contains(p)) return i;
  return -1;
}

void KernelTimeline::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), QColor("#fbfbfb"));
  p.setPen(QColor("#555555"));
  p.drawText(QRect(4, gpuTop(), kLeft - 8, kBarHeight), Qt::AlignVCenter | Qt::AlignLeft, hostTrack_ ? QString("GPU") : track_);
  if (hostTrack_) p.drawText(QRect(4, kBarTop - 2, kLeft - 8, kHostHeight + 4), Qt::AlignVCenter | Qt::AlignLeft, "CPU");
  if (kernels_.empty() || total_ <= 0) {
    p.drawText(rect().adjusted(kLeft, 0, 0, 0), Qt::AlignVCenter, "no profile yet");
    return;
  }
  QFont small = font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  p.setFont(small);
  for (int i = 0; hostTrack_ && i < static_cast<int>(kernels_.size()); ++i) {  // launches, and where each began on the GPU
    QRect l = launchRect(i), r = barRect(i);
    p.fillRect(l, QColor("#8c8c8c"));
    p.setPen(QPen(QColor(120, 120, 120, 140), 1));
    p.drawLine(l.left(), l.bottom() + 1, r.left(), r.top() - 1);
  }
  for (int i = 0; i < static_cast<int>(kernels_.size()); ++i) {
    QRect r = barRect(i);
    const KernelTiming& k = kernels_[static_cast<size_t>(i)];
    QColor fill = isExtern(k.kernel) ? QColor("#e9b35a") : QColor("#5b8fc9");
    if (k.graph == "backward") fill = fill.darker(115);
    p.fillRect(r, fill);
    p.setPen(i == selected_ ? QPen(QColor("#d62728"), 2) : QPen(QColor(255, 255, 255, 160)));
    p.drawRect(r.adjusted(0, 0, -1, -1));
    QString name = QString::fromStdString(k.kernel);
    if (p.fontMetrics().horizontalAdvance(name) + 4 < r.width()) {
      p.setPen(Qt::white);
      p.drawText(r, Qt::AlignCenter, name);
    }
  }
  // the time axis: 0, a few round ticks, the total
  p.setPen(QColor("#777777"));
  int w = width() - kLeft - kRight;
  const int kAxisTop = axisTop();
  p.drawLine(kLeft, kAxisTop, kLeft + w, kAxisTop);
  double step = std::pow(10.0, std::floor(std::log10(total_ / 4)));  // total_ / step is in [4, 40)
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (total_ / (step * m) <= 6) {
      step *= m;
      break;
    }
  for (double t = 0; t <= total_ * 1.0001; t += step) {
    int x = kLeft + static_cast<int>(t / total_ * w);
    p.drawLine(x, kAxisTop, x, kAxisTop + 4);
    p.drawText(QRect(x - 40, kAxisTop + 5, 80, 16), Qt::AlignHCenter, QString::number(t, 'g', 3) + " ms");
  }
}

void KernelTimeline::mousePressEvent(QMouseEvent* e) {
  int i = barAt(e->position().toPoint());
  if (i < 0) return;
  selected_ = i;
  update();
  emit kernelClicked(QString::fromStdString(kernels_[static_cast<size_t>(i)].graph), QString::fromStdString(kernels_[static_cast<size_t>(i)].kernel));
}

bool KernelTimeline::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* h = static_cast<QHelpEvent*>(e);
    int i = barAt(h->pos());
    for (int j = 0; i < 0 && j < static_cast<int>(kernels_.size()); ++j)
      if (launchRect(j).adjusted(0, 0, 1, 0).contains(h->pos())) i = j;
    if (i < 0) {
      QToolTip::hideText();
      return true;
    }
    const KernelTiming& k = kernels_[static_cast<size_t>(i)];
    QString launched = hostTrack_ ? QString("\nissued by the host at %1 ms, began %2 ms later").arg(k.launchMs, 0, 'f', 4).arg(k.startMs - k.launchMs, 0, 'f', 4)
                                  : QString();
    QToolTip::showText(h->globalPos(), QString("%1 · %2\nmedian %3 ms (p10-p90 %4-%5), starts at %6 ms%7\n%8 samples")
                                           .arg(QString::fromStdString(k.graph), QString::fromStdString(k.kernel))
                                           .arg(k.medianMs, 0, 'f', 4)
                                           .arg(k.p10Ms, 0, 'f', 4)
                                           .arg(k.p90Ms, 0, 'f', 4)
                                           .arg(starts_[static_cast<size_t>(i)], 0, 'f', 4)
                                           .arg(launched)
                                           .arg(k.samples));
    return true;
  }
  return QWidget::event(e);
}

}  // namespace fusebox

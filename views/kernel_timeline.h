// One iteration as Nsight Systems draws it: the kernels in launch order as bars on a time axis,
// each as wide as its median time, generated kernels blue, extern calls (matmul, conv, cuBLAS)
// amber; the name inside when it fits, in a tooltip always; a click picks the kernel. Built from
// the per-kernel medians (kernels of one step run back to back on one stream or thread). A CUDA
// run adds the CPU's track above the GPU's: when the host issued each launch, a line down to
// where the kernel began, so a GPU waiting on launches shows.
#pragma once

#include <QWidget>
#include <vector>

#include "report/session_summary.h"

namespace fusebox {

class KernelTimeline : public QWidget {
  Q_OBJECT
public:
  explicit KernelTimeline(QWidget* parent = nullptr);
  void setKernels(const std::vector<KernelTiming>& kernels, const QString& track);
  void setSelected(const QString& graph, const QString& kernel);
  int barCount() const { return static_cast<int>(kernels_.size()); }
  QRect barRect(int i) const;  // where bar i is drawn (for tests that click it)
  bool asLaunched() const { return asLaunched_; }  // bars at recorded start times, gaps shown
  bool hostTrack() const { return hostTrack_; }    // the CPU's launches drawn above
  QRect launchRect(int i) const;                    // kernel i's launch on the CPU track
  QSize sizeHint() const override { return {600, hostTrack_ ? 96 : 74}; }

signals:
  void kernelClicked(const QString& graph, const QString& kernel);

protected:
  void paintEvent(QPaintEvent*) override;
  void mousePressEvent(QMouseEvent* e) override;
  bool event(QEvent* e) override;  // tooltips

private:
  int barAt(QPoint p) const;
  std::vector<KernelTiming> kernels_;
  std::vector<double> starts_;  // ms from the iteration's start
  double total_ = 0;
  bool asLaunched_ = false;
  bool hostTrack_ = false;
  int gpuTop() const;   // the kernels' track, below the CPU's when there is one
  int axisTop() const;
  QString track_;
  int selected_ = -1;
};

}  // namespace fusebox

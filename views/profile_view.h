// Live profile of a run: a bar per kernel (median ms of the samples so far), the per-iteration
// kernel-time timeline, and the memory peak. Fed from the session as samples arrive.
#pragma once

#include <QWidget>
#include <vector>

#include "report/session_summary.h"

class QLabel;
class QChart;
class QChartView;

namespace fusebox {

class ProfileView : public QWidget {
  Q_OBJECT
public:
  explicit ProfileView(QWidget* parent = nullptr);
  void setProfile(const std::vector<KernelTiming>& kernels, const std::vector<double>& iterationTotals, int64_t peakBytes,
                  const QString& status);
  void clear(const QString& status);
  int barCount() const { return bars_; }

private:
  QLabel* summary_;
  QChartView* barsView_;
  QChartView* timelineView_;
  int bars_ = 0;
};

}  // namespace fusebox

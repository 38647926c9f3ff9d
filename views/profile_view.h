// Live profile of a run: one iteration as a timeline of its kernels (KernelTimeline), every
// kernel in a sortable table with its full name, median, spread (p10-p90), share of the step and
// bandwidth, and the per-iteration kernel-time chart. The warm-up iteration is left out of the
// per-kernel figures and the summary says so. Clicking a kernel (bar or row) asks the window to
// select it everywhere. Fed from the session as samples arrive.
#pragma once

#include <QWidget>
#include <vector>

#include "report/session_summary.h"
#include "sessions/session_store.h"

class QLabel;
class QChartView;
class QTableWidget;

namespace fusebox {

class KernelTimeline;

class ProfileView : public QWidget {
  Q_OBJECT
public:
  explicit ProfileView(QWidget* parent = nullptr);
  void setProfile(const std::vector<KernelTiming>& kernels, const std::vector<double>& iterationTotals, int64_t peakBytes,
                  const QString& status);
  void clear(const QString& status);
  int barCount() const { return bars_; }
  QTableWidget* table() const { return table_; }
  KernelTimeline* timeline() const { return timeline_; }
  QString summary() const;
  void selectKernel(const QString& graph, const QString& kernel);  // marks it in the timeline and table
  // The memory plan of every graph, kernel by kernel in execution order: bytes in use and bytes
  // allocated (reuse keeps the second below the sum of all buffers). Known once scheduled.
  void setMemoryPlan(const std::vector<StoredSchedule>& plans);
  int memoryPoints() const { return memoryPoints_; }

signals:
  void kernelClicked(const QString& graph, const QString& kernel);

private:
  QLabel* summary_;
  KernelTimeline* timeline_;
  QTableWidget* table_;
  QChartView* timelineView_;
  QChartView* memoryView_;
  int bars_ = 0;
  int memoryPoints_ = 0;
};

}  // namespace fusebox

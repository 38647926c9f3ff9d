#include "views/profile_view.h"

#include <QChart>
#include <QLegend>
#include <QChartView>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineSeries>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QValueAxis>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include <QColor>

#include "views/kernel_timeline.h"
#include "views/number_item.h"

namespace fusebox {

namespace {

enum Column { kKernel, kGraph, kMedian, kSpread, kShare, kBandwidth, kOps, kSamples, kColumns };

// A round axis maximum: 0.052 -> 0.06, 679 -> 700.
double niceCeil(double v) {
  if (v <= 0) return 1;
  double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0})
    if (m * p >= v) return m * p;
  return 10 * p;
}

}  // namespace

ProfileView::ProfileView(QWidget* parent)
    : QWidget(parent), summary_(new QLabel), timeline_(new KernelTimeline), table_(new QTableWidget(0, kColumns)), timelineView_(new QChartView),
      memoryView_(new QChartView) {
  memoryView_->setRenderHint(QPainter::Antialiasing);
  memoryView_->setChart(new QChart);
  timelineView_->setRenderHint(QPainter::Antialiasing);
  table_->setHorizontalHeaderLabels({"kernel", "graph", "median ms", "p10-p90 ms", "share of step", "GB/s", "ops (recomputed)", "samples"});
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(table_);
  auto* charts = new QTabWidget;  // one chart at a time: stacked, neither had room for its axes
  charts->addTab(timelineView_, "Time per iteration");
  charts->addTab(memoryView_, "Memory per kernel");
  split->addWidget(charts);
  // The table first: its nine columns are what answers "which kernels take the time".
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  split->setSizes({750, 250});
  auto* col = new QVBoxLayout(this);
  col->addWidget(summary_);
  col->addWidget(timeline_);
  col->addWidget(split, 1);
  summary_->setWordWrap(true);
  connect(timeline_, &KernelTimeline::kernelClicked, this, [this](const QString& g, const QString& k) {
    selectKernel(g, k);
    emit kernelClicked(g, k);
  });
  connect(table_, &QTableWidget::cellClicked, this, [this](int row, int) {
    QString g = table_->item(row, kGraph)->text(), k = table_->item(row, kKernel)->text();
    timeline_->setSelected(g, k);
    emit kernelClicked(g, k);
  });
  clear("Not run yet: press Run to compile the generated code and profile it (in a separate process).");
}

void ProfileView::clear(const QString& status) {
  summary_->setText(status);
  timeline_->setKernels({}, "");
  table_->setRowCount(0);
  timelineView_->setChart(new QChart);
  bars_ = 0;
}

QString ProfileView::summary() const { return summary_->text(); }

void ProfileView::setMemoryPlan(const std::vector<StoredSchedule>& plans) {
  auto* live = new QLineSeries;
  auto* allocated = new QLineSeries;
  live->setName("in use");
  allocated->setName("allocated (with reuse)");
  double x = 0, peak = 0;
  QStringList graphs;  // "forward (peak 0.06 MB)"
  for (const StoredSchedule& s : plans) {
    if (s.liveBytes.size() != s.allocatedBytes.size()) continue;  // a malformed record: not drawn
    graphs << QString("%1 peak %2").arg(QString::fromStdString(s.graph)).arg(static_cast<double>(s.peakBytes) / 1048576.0, 0, 'f', 2);
    for (size_t i = 0; i < s.liveBytes.size(); ++i, ++x) {  // steps: a kernel's bytes hold until the next
      double l = static_cast<double>(s.liveBytes[i]) / 1048576.0, a = static_cast<double>(s.allocatedBytes[i]) / 1048576.0;
      live->append(x, l);
      live->append(x + 1, l);
      allocated->append(x, a);
      allocated->append(x + 1, a);
      peak = std::max(peak, a);
    }
  }
  memoryPoints_ = static_cast<int>(x);
  auto* chart = new QChart;
  chart->setTitle(QString("MB per kernel: %1").arg(graphs.join(", then ")));  // short: the pane may be narrow
  chart->addSeries(allocated);
  chart->addSeries(live);
  auto* ax = new QValueAxis;
  ax->setLabelFormat("%d");
  ax->setRange(0, std::max(1.0, x));
  auto* ay = new QValueAxis;
  ay->setRange(0, niceCeil(std::max(peak, 1e-3) * 1.05));
  ay->setTickCount(5);
  ay->setLabelFormat("%.3g");
  chart->addAxis(ax, Qt::AlignBottom);
  chart->addAxis(ay, Qt::AlignLeft);
  for (QLineSeries* s : {live, allocated}) {
    s->attachAxis(ax);
    s->attachAxis(ay);
  }
  // The bottom pane is short: legend beside the plot, small title, thin margins, so the axes fit.
  chart->legend()->setAlignment(Qt::AlignRight);
  chart->setMargins(QMargins(2, 2, 2, 2));
  QFont f = chart->titleFont();
  f.setPointSizeF(f.pointSizeF() * 0.85);
  chart->setTitleFont(f);
  memoryView_->setChart(chart);
}

void ProfileView::selectKernel(const QString& graph, const QString& kernel) {
  timeline_->setSelected(graph, kernel);
  for (int r = 0; r < table_->rowCount(); ++r)
    if (table_->item(r, kGraph)->text() == graph && table_->item(r, kKernel)->text() == kernel) {
      table_->selectRow(r);
      table_->scrollToItem(table_->item(r, kKernel));
    }
}

void ProfileView::setProfile(const std::vector<KernelTiming>& kernels, const std::vector<double>& totals, int64_t peakBytes,
                             const QString& status) {
  double total = 0;
  for (const KernelTiming& k : kernels) total += k.medianMs;
  int warmup = warmupIterations(totals.size());
  summary_->setText(QString("%1 — %2 kernels, %3 ms per step (sum of kernel medians), %4 iterations so far%5, peak intermediate memory %6 MB (the graphs' buffers together; the chart has each graph's own)")
                        .arg(status)
                        .arg(kernels.size())
                        .arg(total, 0, 'f', 4)
                        .arg(totals.size())
                        .arg(warmup ? QString(" (the first is a warm-up, left out of the per-kernel figures)") : QString())
                        .arg(peakBytes / 1048576.0, 0, 'f', 2));
  timeline_->setKernels(kernels, "one step");
  if (timeline_->asLaunched())
    timeline_->setToolTip("One step as launched: each kernel at the median time it began; the gaps between bars are host time "
                          "(launches, thread wake-ups, the step's own work)");
  table_->setSortingEnabled(false);
  table_->setRowCount(static_cast<int>(kernels.size()));
  for (int r = 0; r < static_cast<int>(kernels.size()); ++r) {
    const KernelTiming& k = kernels[static_cast<size_t>(r)];
    auto* name = new QTableWidgetItem(QString::fromStdString(k.kernel));
    name->setToolTip(QString("%1 · %2: median %3 ms, min %4, max %5 over %6 samples")
                         .arg(QString::fromStdString(k.graph), QString::fromStdString(k.kernel))
                         .arg(k.medianMs, 0, 'f', 4)
                         .arg(k.minMs, 0, 'f', 4)
                         .arg(k.maxMs, 0, 'f', 4)
                         .arg(k.samples));
    table_->setItem(r, kKernel, name);
    table_->setItem(r, kGraph, new QTableWidgetItem(QString::fromStdString(k.graph)));
    table_->setItem(r, kMedian, new NumberItem(k.medianMs, QString::number(k.medianMs, 'f', 4)));
    table_->setItem(r, kSpread, new NumberItem(k.p90Ms - k.p10Ms, QString("%1-%2").arg(k.p10Ms, 0, 'f', 4).arg(k.p90Ms, 0, 'f', 4)));
    double share = total > 0 ? k.medianMs / total : 0;
    table_->setItem(r, kShare, new NumberItem(share, QString("%1 %2%").arg(QString(static_cast<int>(std::round(share * 10)), QChar(0x2588))).arg(share * 100, 0, 'f', 1)));
    table_->setItem(r, kBandwidth, new NumberItem(k.gbPerSec(), QString::number(k.gbPerSec(), 'f', 1)));
    size_t recomputed = recomputedCount(k.ops);
    auto* ops = new NumberItem(static_cast<double>(k.ops.size()), recomputed ? QString("%1 (%2)").arg(k.ops.size()).arg(recomputed)
                                                                              : QString::number(k.ops.size()));
    ops->setToolTip(k.ops.empty() ? QString("no op list recorded") : "in order, * recomputed from the forward:\n" + QString::fromStdString(opListText(k.ops)));
    if (recomputed) ops->setForeground(QColor(0xb2, 0x4a, 0x00));
    table_->setItem(r, kOps, ops);
    table_->setItem(r, kSamples, new NumberItem(k.samples, QString::number(k.samples)));
  }
  table_->setSortingEnabled(true);
  table_->sortItems(kMedian, Qt::DescendingOrder);  // the kernels that take the time first
  table_->resizeColumnsToContents();
  bars_ = static_cast<int>(kernels.size());

  auto* line = new QLineSeries;
  for (size_t i = 0; i < totals.size(); ++i) line->append(static_cast<double>(i), totals[i]);
  auto* tl = new QChart;
  tl->addSeries(line);
  tl->setTitle("Kernel time per iteration (ms)");
  auto* tx = new QValueAxis;
  tx->setLabelFormat("%d");
  tx->setRange(0, std::max<double>(1, static_cast<double>(totals.size()) - 1));
  auto* ty = new QValueAxis;
  double max = totals.empty() ? 1 : *std::max_element(totals.begin(), totals.end());
  ty->setRange(0, niceCeil(max * 1.05));
  ty->setTickCount(5);
  ty->setLabelFormat("%.3g");
  tl->addAxis(tx, Qt::AlignBottom);
  tl->addAxis(ty, Qt::AlignLeft);
  line->attachAxis(tx);
  line->attachAxis(ty);
  tl->legend()->hide();
  timelineView_->setChart(tl);
}

}  // namespace fusebox

#include "views/profile_view.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QHBoxLayout>
#include <QHorizontalBarSeries>
#include <QLabel>
#include <QLineSeries>
#include <QValueAxis>
#include <QVBoxLayout>
#include <algorithm>

namespace fusebox {

ProfileView::ProfileView(QWidget* parent) : QWidget(parent), summary_(new QLabel), barsView_(new QChartView), timelineView_(new QChartView) {
  barsView_->setRenderHint(QPainter::Antialiasing);
  timelineView_->setRenderHint(QPainter::Antialiasing);
  auto* charts = new QHBoxLayout;
  charts->addWidget(barsView_, 3);
  charts->addWidget(timelineView_, 2);
  auto* col = new QVBoxLayout(this);
  col->addWidget(summary_);
  col->addLayout(charts, 1);
  summary_->setWordWrap(true);
  clear("Not run yet: press Run to compile the generated code and profile it (in a separate process).");
}

void ProfileView::clear(const QString& status) {
  summary_->setText(status);
  barsView_->setChart(new QChart);
  timelineView_->setChart(new QChart);
  bars_ = 0;
}

void ProfileView::setProfile(const std::vector<KernelTiming>& kernels, const std::vector<double>& totals, int64_t peakBytes,
                             const QString& status) {
  double total = 0;
  for (const KernelTiming& k : kernels) total += k.medianMs;
  summary_->setText(QString("%1 — %2 kernels, %3 ms per iteration (sum of medians), %4 iterations so far, peak intermediate memory %5 MB")
                        .arg(status)
                        .arg(kernels.size())
                        .arg(total, 0, 'f', 4)
                        .arg(totals.size())
                        .arg(peakBytes / 1048576.0, 0, 'f', 2));
  // the slowest kernels, largest at the top
  std::vector<KernelTiming> top = kernels;
  std::sort(top.begin(), top.end(), [](const KernelTiming& a, const KernelTiming& b) { return a.medianMs > b.medianMs; });
  if (top.size() > 20) top.resize(20);
  std::reverse(top.begin(), top.end());
  auto* set = new QBarSet("median ms");
  set->setColor(QColor("#3a6ea5"));
  QStringList names;
  for (const KernelTiming& k : top) {
    *set << k.medianMs;
    std::string g = k.graph == "forward" ? "fwd" : k.graph == "backward" ? "bwd" : "inf";
    names << QString::fromStdString(g + " " + k.kernel);
  }
  auto* series = new QHorizontalBarSeries;
  series->append(set);
  auto* chart = new QChart;
  chart->addSeries(series);
  chart->setTitle("Time per kernel (ms, median over iterations; slowest 20)");
  auto* y = new QBarCategoryAxis;
  y->append(names);
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(y);
  auto* x = new QValueAxis;
  x->setLabelFormat("%.3f");
  chart->addAxis(x, Qt::AlignBottom);
  series->attachAxis(x);
  chart->legend()->hide();
  barsView_->setChart(chart);
  bars_ = static_cast<int>(top.size());

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
  ty->setRange(0, max * 1.15);
  ty->setLabelFormat("%.3f");
  tl->addAxis(tx, Qt::AlignBottom);
  tl->addAxis(ty, Qt::AlignLeft);
  line->attachAxis(tx);
  line->attachAxis(ty);
  tl->legend()->hide();
  timelineView_->setChart(tl);
}

}  // namespace fusebox

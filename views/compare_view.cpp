#include "views/compare_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

namespace fusebox {

namespace {

QTableWidget* table(const QStringList& headers) {
  auto* t = new QTableWidget(0, static_cast<int>(headers.size()));
  t->setHorizontalHeaderLabels(headers);
  t->horizontalHeader()->setStretchLastSection(true);
  t->verticalHeader()->hide();
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  return t;
}

void addRow(QTableWidget* t, const QStringList& cells) {
  int r = t->rowCount();
  t->insertRow(r);
  for (int c = 0; c < cells.size(); ++c) t->setItem(r, c, new QTableWidgetItem(cells[c]));
}

QString mates(const std::vector<int>& v) {
  QStringList s;
  for (int n : v) s << QString("n%1").arg(n);
  return s.isEmpty() ? "alone" : s.join(" ");
}

}  // namespace

CompareView::CompareView(QWidget* parent)
    : QWidget(parent), other_(new QComboBox), summary_(new QLabel("Pick a second session (another config of a model) to compare fusion decisions.")),
      regrouped_(table({"graph", "node", "A: kernel (with)", "B: kernel (with)"})),
      decisions_(table({"graph", "pair", "kind", "A", "B"})), times_(table({"side", "graph", "kernel", "median ms", "GB/s"})) {
  auto* go = new QPushButton("Compare");
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel("Compare this session (A) with (B):"));
  bar->addWidget(other_, 1);
  bar->addWidget(go);
  auto* split = new QSplitter;
  split->addWidget(regrouped_);
  split->addWidget(decisions_);
  split->addWidget(times_);
  auto* col = new QVBoxLayout(this);
  col->addLayout(bar);
  col->addWidget(summary_);
  col->addWidget(split, 1);
  summary_->setWordWrap(true);
  summary_->setTextFormat(Qt::PlainText);  // model names and configs come from session files
  connect(go, &QPushButton::clicked, this, [this] {
    if (other_->currentIndex() >= 0) emit compareWith(other_->currentData().toLongLong());
  });
}

void CompareView::setCandidates(const std::vector<std::pair<int64_t, QString>>& sessions) {
  other_->clear();
  for (const auto& [id, label] : sessions) other_->addItem(label, QVariant::fromValue<qlonglong>(id));
}

void CompareView::setComparison(const FusionComparison& c) {
  QString times = c.totalMsA > 0 && c.totalMsB > 0 ? QString(" — time B/A %1x").arg(c.totalMsB / c.totalMsA, 0, 'f', 2) : QString();
  summary_->setText(QString("A: %1 %2 (%3 kernels)\nB: %4 %5 (%6 kernels)%7\n%8 nodes grouped differently, %9 decisions differ")
                        .arg(QString::fromStdString(c.a.model), QString::fromStdString(c.a.config))
                        .arg(c.kernelsA)
                        .arg(QString::fromStdString(c.b.model), QString::fromStdString(c.b.config))
                        .arg(c.kernelsB)
                        .arg(times)
                        .arg(c.regrouped.size())
                        .arg(c.decisions.size()));
  regrouped_->setRowCount(0);
  for (const NodeGrouping& g : c.regrouped)
    addRow(regrouped_, {QString::fromStdString(g.graph), QString("n%1").arg(g.node), QString::fromStdString(g.kernelA) + " (" + mates(g.matesA) + ")",
                        QString::fromStdString(g.kernelB) + " (" + mates(g.matesB) + ")"});
  decisions_->setRowCount(0);
  for (const DecisionDiff& d : c.decisions)
    addRow(decisions_, {QString::fromStdString(d.graph), QString("n%1 + n%2").arg(d.first).arg(d.second), QString::fromStdString(d.kind),
                        d.reasonA.empty() ? "not considered" : QString::fromStdString(d.reasonA),
                        d.reasonB.empty() ? "not considered" : QString::fromStdString(d.reasonB)});
  times_->setRowCount(0);
  for (const auto& [side, ts] : {std::make_pair(QString("A"), &c.timingsA), std::make_pair(QString("B"), &c.timingsB)})
    for (const KernelTiming& t : *ts)
      addRow(times_, {side, QString::fromStdString(t.graph), QString::fromStdString(t.kernel), QString::number(t.medianMs, 'f', 4),
                      QString::number(t.gbPerSec(), 'f', 1)});
  for (QTableWidget* t : {regrouped_, decisions_, times_}) t->resizeColumnsToContents();
  if (c.timingsA.empty() || c.timingsB.empty())
    summary_->setText(summary_->text() + QString("\nKernel times: %1 was never run (Run & profile it to compare times).")
                                             .arg(c.timingsA.empty() && c.timingsB.empty() ? "neither session" : c.timingsA.empty() ? "A" : "B"));
}

void CompareView::clear(const QString& message) {
  summary_->setText(message);
  for (QTableWidget* t : {regrouped_, decisions_, times_}) t->setRowCount(0);
}

QString CompareView::summary() const { return summary_->text(); }

int CompareView::regroupedRows() const { return regrouped_->rowCount(); }
int CompareView::decisionRows() const { return decisions_->rowCount(); }

}  // namespace fusebox

#include "views/compare_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>

#include "views/number_item.h"

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

QString kernelsWith(const std::vector<std::string>& kernels, const std::vector<std::string>& mates) {
  if (kernels.empty()) return "not computed";
  QStringList k, m;
  for (const std::string& x : kernels) k << QString::fromStdString(x);
  for (const std::string& x : mates) m << QString::fromStdString(x);
  return k.join(", ") + " (" + (m.isEmpty() ? QString("alone") : m.size() > 4 ? m.mid(0, 4).join(", ") + QString(", … %1 in all").arg(m.size()) : m.join(", ")) + ")";
}

// Milliseconds with enough digits for sub-microsecond kernels: 4 decimals, or 4 significant digits below 0.01.
QString ms(double v) { return std::abs(v) >= 0.01 || v == 0 ? QString::number(v, 'f', 4) : QString::number(v, 'g', 4); }
QString signedMs(double v) { return (v > 0 ? "+" : "") + ms(v); }

}  // namespace

CompareView::CompareView(QWidget* parent)
    : QWidget(parent), other_(new QComboBox), summary_(new QLabel("Pick a second session (another config of a model) to compare fusion decisions.")),
      regrouped_(table({"graph", "traced op", "A: kernels (computed with)", "B: kernels (computed with)"})),
      decisions_(table({"graph", "pair (what it computes)", "kind", "A", "B"})),
      times_(table({"graph", "A kernel", "B kernel", "A ms", "B ms", "B - A ms", "noise ± ms", "verdict", "same ops"})) {
  auto* go = new QPushButton("Compare");
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel("Compare this session (A) with (B):"));
  bar->addWidget(other_, 1);
  bar->addWidget(go);
  auto* save = new QPushButton("Export…");
  save->setToolTip("Write this comparison as HTML or PDF");
  bar->addWidget(save);
  connect(save, &QPushButton::clicked, this, &CompareView::exportRequested);
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
  QString times;
  if (c.totalMsA > 0 && c.totalMsB > 0)
    times = QString(" — step time A %1 ms, B %2 ms (B/A %3x; noise ±%4 ms%5)")
                .arg(c.totalMsA, 0, 'f', 4)
                .arg(c.totalMsB, 0, 'f', 4)
                .arg(c.totalMsB / c.totalMsA, 0, 'f', 2)
                .arg(c.totalNoiseMs, 0, 'f', 4)
                .arg(std::abs(c.totalMsB - c.totalMsA) > c.totalNoiseMs ? QString(", beyond it") : QString(", within it"));
  int beyond = 0;
  for (const KernelDelta& d : c.kernels) beyond += d.beyondNoise();
  summary_->setText(QString("A: %1 %2 (%3 kernels)\nB: %4 %5 (%6 kernels)%7\n%8 traced ops computed with different ops, %9 decisions differ%10 "
                            "(matched by traced provenance, not node ids)")
                        .arg(QString::fromStdString(c.a.model), QString::fromStdString(c.a.config))
                        .arg(c.kernelsA)
                        .arg(QString::fromStdString(c.b.model), QString::fromStdString(c.b.config))
                        .arg(c.kernelsB)
                        .arg(times)
                        .arg(c.regrouped.size())
                        .arg(c.decisions.size())
                        .arg(c.kernels.empty() ? QString() : QString(", %1 of %2 kernel times changed beyond noise").arg(beyond).arg(c.kernels.size())));
  regrouped_->setRowCount(0);
  for (const TracedRegrouping& g : c.regrouped)
    addRow(regrouped_, {QString::fromStdString(g.graph), QString::fromStdString(g.label), kernelsWith(g.kernelsA, g.matesA), kernelsWith(g.kernelsB, g.matesB)});
  decisions_->setRowCount(0);
  for (const DecisionDiff& d : c.decisions) {
    auto side = [](const std::string& nodes, const std::string& reason, bool fused) {
      if (reason.empty()) return QString("not considered");
      bool says = reason.rfind("fused", 0) == 0;  // the scheduler's reason may already start "fused: …"
      return QString::fromStdString(nodes) + (fused && !says ? ": fused: " : ": ") + QString::fromStdString(reason);
    };
    addRow(decisions_, {QString::fromStdString(d.graph), QString::fromStdString(d.what), QString::fromStdString(d.kind),
                        side(d.nodesA, d.reasonA, d.fusedA), side(d.nodesB, d.reasonB, d.fusedB)});
  }
  times_->setSortingEnabled(false);
  times_->setRowCount(0);
  for (const KernelDelta& d : c.kernels) {
    int r = times_->rowCount();
    times_->insertRow(r);
    auto text = [&](int col, const QString& v) { times_->setItem(r, col, new QTableWidgetItem(v)); };
    text(0, QString::fromStdString(d.graph));
    text(1, d.kernelA.empty() ? "—" : QString::fromStdString(d.kernelA));
    text(2, d.kernelB.empty() ? "—" : QString::fromStdString(d.kernelB));
    times_->setItem(r, 3, new NumberItem(d.msA, d.kernelA.empty() ? "" : ms(d.msA)));
    times_->setItem(r, 4, new NumberItem(d.msB, d.kernelB.empty() ? "" : ms(d.msB)));
    auto* delta = new NumberItem(d.msB - d.msA, signedMs(d.msB - d.msA));
    if (d.beyondNoise()) delta->setForeground(d.msB > d.msA ? QColor(0xc6, 0x28, 0x28) : QColor(0x2e, 0x7d, 0x32));
    times_->setItem(r, 5, delta);
    times_->setItem(r, 6, new NumberItem(d.noiseMs, ms(d.noiseMs)));
    text(7, !d.paired() ? (d.kernelA.empty() ? "only in B" : "only in A") : !d.beyondNoise() ? "within noise" : d.msB > d.msA ? "B slower" : "B faster");
    times_->setItem(r, 8, new NumberItem(d.overlap, d.paired() ? QString("%1%").arg(d.overlap * 100, 0, 'f', 0) : QString()));
  }
  times_->setSortingEnabled(true);
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
int CompareView::kernelRows() const { return times_->rowCount(); }
QTableWidget* CompareView::kernelTable() const { return times_; }

}  // namespace fusebox

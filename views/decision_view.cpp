#include "views/decision_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QTableWidget>
#include <QVBoxLayout>

#include "views/number_item.h"

namespace fusebox {

namespace {

enum Column { kGraph, kFirst, kSecond, kKind, kFused, kScore, kReason, kColumns };

QString bytes(qint64 b) {
  if (b >= (1 << 20)) return QString::number(b / 1048576.0, 'f', 2) + " MB";
  if (b >= 1024) return QString::number(b / 1024.0, 'f', 1) + " KB";
  return QString::number(b) + " B";
}

}  // namespace

DecisionView::DecisionView(QWidget* parent)
    : QWidget(parent), summary_(new QLabel), filter_(new QLineEdit), outcome_(new QComboBox), table_(new QTableWidget(0, kColumns)) {
  filter_->setPlaceholderText("filter by node, op, kind or reason");
  filter_->setClearButtonEnabled(true);
  outcome_->addItems({"all decisions", "fused", "not fused"});
  table_->setHorizontalHeaderLabels({"graph", "first node", "second node", "kind", "fused?", "saves", "reason"});
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  auto* bar = new QHBoxLayout;
  bar->addWidget(summary_, 1);
  bar->addWidget(filter_, 1);
  bar->addWidget(outcome_);
  auto* col = new QVBoxLayout(this);
  col->setContentsMargins(0, 0, 0, 0);
  col->addLayout(bar);
  col->addWidget(table_, 1);
  connect(filter_, &QLineEdit::textChanged, this, &DecisionView::applyFilter);
  connect(outcome_, qOverload<int>(&QComboBox::currentIndexChanged), this, &DecisionView::applyFilter);
  connect(table_, &QTableWidget::cellClicked, this, [this](int row, int) { clickRow(row); });
  clear();
}

void DecisionView::clear() {
  table_->setRowCount(0);
  summary_->setText("Fusion decisions appear after the schedule stage.");
}

void DecisionView::setDecisions(const std::vector<DecisionRow>& rows, const QString& emptyNote) {
  table_->setSortingEnabled(false);
  table_->setRowCount(static_cast<int>(rows.size()));
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    const DecisionRow& d = rows[static_cast<size_t>(i)];
    auto* graph = new QTableWidgetItem(d.graph);
    graph->setData(Qt::UserRole, d.first);
    graph->setData(Qt::UserRole + 1, d.second);
    table_->setItem(i, kGraph, graph);
    auto node = [](int id, const QString& label) {
      auto* item = new QTableWidgetItem(QString("l%1  %2").arg(id).arg(label));
      item->setToolTip(label);
      return item;
    };
    table_->setItem(i, kFirst, node(d.first, d.firstLabel));
    table_->setItem(i, kSecond, node(d.second, d.secondLabel));
    table_->setItem(i, kKind, new QTableWidgetItem(d.kind));
    auto* f = new QTableWidgetItem(d.fused ? "fused" : "not fused");
    f->setForeground(d.fused ? QColor("#2e7d32") : QColor("#b23c17"));
    table_->setItem(i, kFused, f);
    table_->setItem(i, kScore, new NumberItem(static_cast<double>(d.score), bytes(d.score)));
    auto* reason = new QTableWidgetItem(d.reason);
    reason->setToolTip(d.reason);
    table_->setItem(i, kReason, reason);
  }
  table_->setSortingEnabled(true);
  table_->sortItems(kScore, Qt::DescendingOrder);
  table_->resizeColumnsToContents();
  for (int c : {kFirst, kSecond})
    if (table_->columnWidth(c) > 220) table_->setColumnWidth(c, 220);
  if (rows.empty()) {
    summary_->setText(emptyNote.isEmpty() ? QString("No fusion decisions recorded.") : emptyNote);
    return;
  }
  applyFilter();
}

void DecisionView::applyFilter() {
  QString f = filter_->text().trimmed();
  int want = outcome_->currentIndex();  // 0 all, 1 fused, 2 not fused
  int total = table_->rowCount(), fusedRows = 0, shown = 0;
  for (int i = 0; i < total; ++i) {
    bool fused = table_->item(i, kFused)->text() == "fused";
    fusedRows += fused;
    bool show = want == 0 || (want == 1) == fused;
    if (show && !f.isEmpty()) {
      show = false;
      for (int c = 0; c < kColumns && !show; ++c) show = table_->item(i, c)->text().contains(f, Qt::CaseInsensitive);
    }
    table_->setRowHidden(i, !show);
    shown += show;
  }
  if (total == 0) return;  // clear() or setDecisions said what an empty table means
  QString s = QString("%1 decisions: %2 fused, %3 not").arg(total).arg(fusedRows).arg(total - fusedRows);
  if (shown != total) s += QString("; %1 shown by the filter").arg(shown);
  summary_->setText(s + " (click one to show both nodes in every pane)");
}

QString DecisionView::summaryText() const { return summary_->text(); }

int DecisionView::visibleRows() const {
  int n = 0;
  for (int i = 0; i < table_->rowCount(); ++i) n += !table_->isRowHidden(i);
  return n;
}

void DecisionView::clickRow(int row) {
  if (row < 0 || row >= table_->rowCount()) return;
  table_->selectRow(row);
  QTableWidgetItem* g = table_->item(row, kGraph);
  emit pairClicked(g->text(), g->data(Qt::UserRole).toInt(), g->data(Qt::UserRole + 1).toInt());
}

}  // namespace fusebox

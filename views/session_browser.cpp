#include "views/session_browser.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace fusebox {

namespace {

enum Column { kId, kName, kModel, kConfig, kTarget, kCreated, kKernels, kTime, kTags, kNotes, kColumns };

QTableWidgetItem* cell(const QString& text) {
  auto* item = new QTableWidgetItem(text);  // plain text: a file's <b> stays "<b>"
  item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
  item->setToolTip(text);
  return item;
}

}  // namespace

SessionBrowser::SessionBrowser(QWidget* parent)
    : QDialog(parent), title_(new QLabel), filter_(new QLineEdit), table_(new QTableWidget(0, kColumns)) {
  setWindowTitle("Sessions");
  resize(1100, 480);
  filter_->setPlaceholderText("filter by model, name, config, tag or note");
  filter_->setClearButtonEnabled(true);
  table_->setHorizontalHeaderLabels({"id", "name", "model", "config", "target", "created (UTC)", "kernels", "ms / step", "tags", "notes"});
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setSortingEnabled(true);
  auto* open = new QPushButton("Open");
  open->setDefault(true);
  auto* rename = new QPushButton("Rename…");
  auto* notes = new QPushButton("Notes && tags…");
  auto* remove = new QPushButton("Delete…");
  auto* close = new QPushButton("Close");
  auto* buttons = new QHBoxLayout;
  for (QPushButton* b : {open, rename, notes, remove}) buttons->addWidget(b);
  buttons->addStretch(1);
  buttons->addWidget(close);
  auto* col = new QVBoxLayout(this);
  col->addWidget(title_);
  col->addWidget(filter_);
  col->addWidget(table_, 1);
  col->addLayout(buttons);
  connect(filter_, &QLineEdit::textChanged, this, &SessionBrowser::applyFilter);
  connect(table_, &QTableWidget::cellDoubleClicked, this, [this] { openSelected(); });
  connect(open, &QPushButton::clicked, this, &SessionBrowser::openSelected);
  connect(close, &QPushButton::clicked, this, &QDialog::hide);
  connect(remove, &QPushButton::clicked, this, &SessionBrowser::deleteSelected);
  connect(rename, &QPushButton::clicked, this, [this] {
    const SessionRow* r = selectedRow();
    if (!r) return;
    bool ok = false;
    QString name = QInputDialog::getText(this, "Rename session", QString("Name of session %1:").arg(r->id), QLineEdit::Normal, r->name, &ok);
    if (ok) renameSelected(name);
  });
  connect(notes, &QPushButton::clicked, this, [this] {
    const SessionRow* r = selectedRow();
    if (!r) return;
    QDialog d(this);
    d.setWindowTitle(QString("Notes and tags of session %1").arg(r->id));
    auto* tags = new QLineEdit(r->tags);
    tags->setPlaceholderText("comma-separated, e.g. baseline, cuda");
    auto* text = new QPlainTextEdit(r->notes);
    auto* form = new QFormLayout(&d);
    form->addRow("Tags", tags);
    form->addRow("Notes", text);
    auto* box = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    form->addRow(box);
    connect(box, &QDialogButtonBox::accepted, &d, &QDialog::accept);
    connect(box, &QDialogButtonBox::rejected, &d, &QDialog::reject);
    if (d.exec() == QDialog::Accepted) annotateSelected(text->toPlainText(), tags->text());
  });
}

void SessionBrowser::setFile(const QString& path, const std::vector<SessionRow>& rows) {
  qint64 keep = selectedId();
  path_ = path;
  rows_ = rows;
  title_->setText(QString("%1 — %2 session(s). Double-click one to show it as it was recorded.").arg(path).arg(rows.size()));
  table_->setSortingEnabled(false);
  table_->setRowCount(static_cast<int>(rows.size()));
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    const SessionRow& r = rows[static_cast<size_t>(i)];
    auto* id = new QTableWidgetItem;
    id->setData(Qt::DisplayRole, r.id);  // sorts as a number
    id->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
    table_->setItem(i, kId, id);
    table_->setItem(i, kName, cell(r.name));
    table_->setItem(i, kModel, cell(r.model));
    table_->setItem(i, kConfig, cell(r.config));
    table_->setItem(i, kTarget, cell(r.target));
    table_->setItem(i, kCreated, cell(r.created));
    auto* kernels = new QTableWidgetItem;
    kernels->setData(Qt::DisplayRole, r.kernels);
    table_->setItem(i, kKernels, kernels);
    auto* time = new QTableWidgetItem(r.runs ? QString::number(r.msPerStep, 'f', 3) : QString("not run"));
    time->setToolTip(r.runs ? QString("the latest of %1 profiled run(s): mean kernel time per step").arg(r.runs) : QString());
    table_->setItem(i, kTime, time);
    table_->setItem(i, kTags, cell(r.tags));
    table_->setItem(i, kNotes, cell(QString(r.notes).replace('\n', " ⏎ ")));
  }
  table_->setSortingEnabled(true);
  table_->sortItems(kId, Qt::DescendingOrder);  // newest first
  table_->resizeColumnsToContents();
  for (int c : {kModel, kConfig, kNotes})
    if (table_->columnWidth(c) > 320) table_->setColumnWidth(c, 320);
  applyFilter();
  selectId(keep ? keep : (rows.empty() ? 0 : rows.back().id));
}

void SessionBrowser::applyFilter() {
  QString f = filter_->text().trimmed();
  for (int i = 0; i < table_->rowCount(); ++i) {
    bool show = f.isEmpty();
    for (int c = 0; c < kColumns && !show; ++c)
      if (table_->item(i, c) && table_->item(i, c)->text().contains(f, Qt::CaseInsensitive)) show = true;
    table_->setRowHidden(i, !show);
  }
}

int SessionBrowser::visibleRows() const {
  int n = 0;
  for (int i = 0; i < table_->rowCount(); ++i) n += !table_->isRowHidden(i);
  return n;
}

qint64 SessionBrowser::selectedId() const {
  int row = table_->currentRow();
  if (row < 0 || !table_->item(row, kId)) return 0;
  return table_->item(row, kId)->data(Qt::DisplayRole).toLongLong();
}

void SessionBrowser::selectId(qint64 id) {
  for (int i = 0; i < table_->rowCount(); ++i)
    if (table_->item(i, kId) && table_->item(i, kId)->data(Qt::DisplayRole).toLongLong() == id) {
      table_->selectRow(i);
      table_->setCurrentCell(i, kName);
      return;
    }
}

const SessionRow* SessionBrowser::selectedRow() const {
  qint64 id = selectedId();
  for (const SessionRow& r : rows_)
    if (r.id == id) return &r;
  return nullptr;
}

void SessionBrowser::openSelected() {
  if (qint64 id = selectedId()) emit openRequested(id);
}

void SessionBrowser::renameSelected(const QString& name) {
  if (const SessionRow* r = selectedRow()) emit annotateRequested(r->id, name, r->notes, r->tags);
}

void SessionBrowser::annotateSelected(const QString& notes, const QString& tags) {
  if (const SessionRow* r = selectedRow()) emit annotateRequested(r->id, r->name, notes, tags);
}

void SessionBrowser::deleteSelected() {
  const SessionRow* r = selectedRow();
  if (!r) return;
  if (confirm_ && QMessageBox::question(this, "Delete session",
                                        QString("Delete session %1 (%2, %3) and everything recorded for it from %4?")
                                            .arg(r->id)
                                            .arg(r->model, r->config, path_)) != QMessageBox::Yes)
    return;
  emit deleteRequested(r->id);
}

}  // namespace fusebox

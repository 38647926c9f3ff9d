#include "views/partition_view.h"

#include <QFont>
#include <QGridLayout>
#include <QLabel>
#include <QPlainTextEdit>

namespace fusebox {

PartitionView::PartitionView(QWidget* parent) : QWidget(parent), verdict_(new QLabel) {
  auto* grid = new QGridLayout(this);
  verdict_->setWordWrap(true);
  verdict_->setTextFormat(Qt::PlainText);
  grid->addWidget(verdict_, 0, 0, 1, 2);
  for (int i = 0; i < 2; ++i) {
    titles_[i] = new QLabel;
    titles_[i]->setTextFormat(Qt::PlainText);
    sides_[i] = new QPlainTextEdit;
    sides_[i]->setReadOnly(true);
    sides_[i]->setLineWrapMode(QPlainTextEdit::NoWrap);
    sides_[i]->setFont(QFont("Monospace", 9));
    grid->addWidget(titles_[i], 1, i);
    grid->addWidget(sides_[i], 2, i);
  }
  grid->setRowStretch(2, 1);
  clear("Train a model and run the partition stage to see the default and min-cut partitions side by side.");
}

void PartitionView::clear(const QString& status) {
  verdict_->setText(status);
  for (int i = 0; i < 2; ++i) {
    titles_[i]->clear();
    sides_[i]->clear();
  }
}

void PartitionView::setPartitions(const QString& verdict, const std::vector<std::pair<QString, QString>>& sides, const QString& chosen) {
  if (sides.size() != 2) {
    clear("This session was recorded before partitions were compared side by side: compile it again to see both.");
    return;
  }
  verdict_->setText(verdict);
  for (int i = 0; i < 2; ++i) {
    const auto& [title, text] = sides[static_cast<size_t>(i)];
    titles_[i]->setText(title == "mincut" ? "Min-cut partitioner (recomputes cheap ops)" : "Default partitioner (saves what the backward reads)");
    if (title == chosen) titles_[i]->setText(titles_[i]->text() + "  — this session's");
    sides_[i]->setPlainText(text);
  }
}

QString PartitionView::verdict() const { return verdict_->text(); }
QString PartitionView::sideText(int i) const { return sides_[i]->toPlainText(); }
QString PartitionView::sideTitle(int i) const { return titles_[i]->text(); }

}  // namespace fusebox

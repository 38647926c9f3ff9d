// A table cell that shows `text` and sorts by `value` (a number): "1.50 MB" after "768.0 KB",
// "0.0300" before "0.1000", as the tables of the profile and the decisions need.
#pragma once

#include <QTableWidgetItem>

namespace fusebox {

class NumberItem : public QTableWidgetItem {
public:
  NumberItem(double value, const QString& text) : QTableWidgetItem(text) {
    setData(Qt::UserRole, value);
    setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  }
  bool operator<(const QTableWidgetItem& other) const override {
    QVariant a = data(Qt::UserRole), b = other.data(Qt::UserRole);
    if (a.isValid() && b.isValid()) return a.toDouble() < b.toDouble();
    return QTableWidgetItem::operator<(other);
  }
};

}  // namespace fusebox

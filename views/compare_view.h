// Fusion comparison of two sessions: nodes grouped into kernels differently, the decisions that
// differ with both reasons, and the kernel times of both sides.
#pragma once

#include <QWidget>

#include "report/session_summary.h"

class QComboBox;
class QLabel;
class QTableWidget;

namespace fusebox {

class CompareView : public QWidget {
  Q_OBJECT
public:
  explicit CompareView(QWidget* parent = nullptr);
  // The sessions one can compare with (id, "3: mlp train target=cpu fusion=off").
  void setCandidates(const std::vector<std::pair<int64_t, QString>>& sessions);
  void setComparison(const FusionComparison& c);
  void clear(const QString& message);  // no comparison shown (a new model, a reset)
  QString summary() const;
  int regroupedRows() const;
  int decisionRows() const;

signals:
  void compareWith(int64_t session);

private:
  QComboBox* other_;
  QLabel* summary_;
  QTableWidget* regrouped_;
  QTableWidget* decisions_;
  QTableWidget* times_;
};

}  // namespace fusebox

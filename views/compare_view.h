// Comparison of two sessions of one model, matched by traced provenance: the traced ops computed
// with different ops, the decisions that differ with both reasons, and the kernels of both runs
// paired by what they compute, with the time difference and the noise band it is judged against.
#pragma once

#include <QWidget>

#include "report/session_compare.h"

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
  int kernelRows() const;
  QTableWidget* kernelTable() const;

signals:
  void compareWith(int64_t session);
  void exportRequested();  // "Export…": the comparison on screen as HTML or PDF

private:
  QComboBox* other_;
  QLabel* summary_;
  QTableWidget* regrouped_;
  QTableWidget* decisions_;
  QTableWidget* times_;
};

}  // namespace fusebox

// Every fusion decision of the schedule as a table: graph, the two loop-IR nodes (with what they
// compute), vertical or horizontal, fused or not, the memory traffic fusing saves (bytes), the
// scheduler's reason. Sortable, filtered by text and by outcome; a click asks the window to show
// both nodes in every pane.
#pragma once

#include <QWidget>
#include <vector>

class QComboBox;
class QLabel;
class QLineEdit;
class QTableWidget;

namespace fusebox {

struct DecisionRow {
  QString graph;
  int first = 0, second = 0;           // loop-IR node ids
  QString firstLabel, secondLabel;     // what they compute ("reduce sum buf3")
  QString kind;                        // "vertical", "horizontal"
  bool fused = false;
  qint64 score = 0;                    // bytes saved
  QString reason;
};

class DecisionView : public QWidget {
  Q_OBJECT
public:
  explicit DecisionView(QWidget* parent = nullptr);
  // `emptyNote`: what an empty list means (fusion off, not scheduled yet).
  void setDecisions(const std::vector<DecisionRow>& rows, const QString& emptyNote = QString());
  void clear();
  QTableWidget* table() const { return table_; }
  QLineEdit* filter() const { return filter_; }
  QComboBox* outcome() const { return outcome_; }
  int visibleRows() const;
  QString summaryText() const;
  void clickRow(int row);  // as a click on that (visible) row does

signals:
  void pairClicked(const QString& graph, int first, int second);

private:
  void applyFilter();  // and the summary, counted from the table
  QLabel* summary_;
  QLineEdit* filter_;
  QComboBox* outcome_;
  QTableWidget* table_;
};

}  // namespace fusebox

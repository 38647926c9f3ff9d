// The session browser: every session of one session file in a table (name, model, config,
// target, date, kernels, time per step, tags, notes), filtered as you type; open one, rename it,
// write notes and tags, delete it. It only shows rows and asks: the main window reads and writes
// the file (sessions/ speaks SQL) and gives it new rows. Text from the file is shown as plain text.
#pragma once

#include <QDialog>
#include <vector>

class QLabel;
class QLineEdit;
class QTableWidget;

namespace fusebox {

struct SessionRow {
  qint64 id = 0;
  QString name, model, config, target, created, tags, notes;
  int kernels = 0, runs = 0;
  double msPerStep = 0;  // 0: never run
};

class SessionBrowser : public QDialog {
  Q_OBJECT
public:
  explicit SessionBrowser(QWidget* parent = nullptr);
  void setFile(const QString& path, const std::vector<SessionRow>& rows);
  QString file() const { return path_; }
  QTableWidget* table() const { return table_; }
  QLineEdit* filter() const { return filter_; }
  qint64 selectedId() const;  // 0: none
  void selectId(qint64 id);
  int visibleRows() const;
  void setConfirm(bool on) { confirm_ = on; }  // tests answer no dialogs

  // What the buttons do (also driven by tests).
  void openSelected();
  void renameSelected(const QString& name);
  void annotateSelected(const QString& notes, const QString& tags);
  void deleteSelected();

signals:
  void openRequested(qint64 id);
  void annotateRequested(qint64 id, const QString& name, const QString& notes, const QString& tags);
  void deleteRequested(qint64 id);

private:
  void applyFilter();
  const SessionRow* selectedRow() const;
  QString path_;
  std::vector<SessionRow> rows_;
  QLabel* title_;
  QLineEdit* filter_;
  QTableWidget* table_;
  bool confirm_ = true;
};

}  // namespace fusebox

// One of the main window's graph panes: a title, a choice of graph (e.g. forward / backward), a
// search box, a fit button and the GraphView.
#pragma once

#include <QWidget>
#include <map>

#include "views/graph_view.h"

class QComboBox;
class QLabel;
class QLineEdit;

namespace fusebox {

struct PaneGraph {
  QString name;  // "traced", "joint", "forward", ...
  GraphLayout layout;
  std::map<std::string, std::vector<int64_t>> origins;
};

class GraphPane : public QWidget {
  Q_OBJECT
public:
  GraphPane(const QString& title, const QString& emptyHint, QWidget* parent = nullptr);
  void setGraphs(const std::vector<PaneGraph>& graphs);  // keeps the current choice when it still exists
  void addGraphs(const std::vector<PaneGraph>& graphs);  // after the current ones; replaces those of the same name
  void clear();
  GraphView* view() const { return view_; }
  QString currentGraph() const;
  QComboBox* choice() const { return choice_; }

signals:
  void nodeClicked(const QString& graph, const QString& node);

private:
  void show(int index);
  QLabel* title_;
  QComboBox* choice_;
  QLineEdit* search_;
  QLabel* found_;
  GraphView* view_;
  QString emptyHint_;
  std::vector<PaneGraph> graphs_;
};

}  // namespace fusebox

// One of the main window's graph panes: a title, a choice of graph (e.g. forward / backward), a
// search box with next/previous and a count, a scope menu (expand all, collapse to depth N), fit
// and focus buttons, and the GraphView. The pane folds its graph by module scope (ScopeFolding):
// double-click a box to expand it, inside an expanded scope to collapse it. Re-layouts after a
// fold change run on a thread of the pane's own and are cached by the folded graph's text.
#pragma once

#include <QThreadPool>
#include <QWidget>
#include <map>
#include <memory>
#include <set>

#include "report/graph_fold.h"
#include "views/graph_view.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QToolButton;

namespace fusebox {

struct PaneGraph {
  QString name;  // "traced", "joint", "forward", ...
  std::shared_ptr<const ScopeFolding> folding;
  std::map<std::string, std::vector<int64_t>> origins;  // graph node -> traced node ids
  std::set<std::string> expanded;                       // the scopes drawn open
  GraphLayout layout;                                   // of folding->foldedDot(expanded)
};

class GraphPane : public QWidget {
  Q_OBJECT
public:
  GraphPane(const QString& title, const QString& emptyHint, QWidget* parent = nullptr);
  ~GraphPane() override;
  void setGraphs(const std::vector<PaneGraph>& graphs);  // keeps the current choice when it still exists
  void addGraphs(const std::vector<PaneGraph>& graphs);  // after the current ones; replaces those of the same name
  void clear();
  GraphView* view() const { return view_; }
  QString title() const;
  QString currentGraph() const;
  QComboBox* choice() const { return choice_; }
  QLineEdit* searchBox() const { return search_; }
  QToolButton* focusButton() const { return focus_; }

  // Folding of the current graph.
  const ScopeFolding* folding() const;
  std::set<std::string> expanded() const;
  void setExpanded(const std::set<std::string>& scopes, const std::string& centreOn = "");
  void setAskWhyNotFused(bool on) { askWhyNotFused_ = on; }  // the fused pane offers the question
  void expand(const std::string& scope);
  void collapse(const std::string& scope);
  void expandToDepth(int depth);
  // Opens `scope` and the scopes around it; false when the current graph has no such scope.
  bool openScope(const std::string& scope);
  // Expands what hides `node` and selects it; revealAll does so for several at once.
  void reveal(const std::string& node);
  void revealAll(const std::vector<std::string>& nodes);
  // Shows graph `name` (e.g. "backward"); false when the pane has none of that name.
  bool showGraphNamed(const QString& name);
  // A node of graph `graph` (any of the pane's graphs): its label and traced origins.
  QString nodeLabel(const QString& graph, const std::string& node) const;
  std::vector<int64_t> nodeOrigins(const QString& graph, const std::string& node) const;
  QString nodeKernel(const QString& graph, const std::string& node) const;  // its kernel cluster's name ("" when none)
  bool layoutPending() const { return pending_; }
  // The drawn item standing for a graph node, and the graph nodes an item stands for.
  std::string itemOf(const std::string& node) const;
  std::vector<std::string> nodesOf(const std::string& item) const;

  // Search (the box's text): hits in the current graph, the one shown (0-based), moving.
  int searchHits() const { return static_cast<int>(hits_.size()); }
  int searchIndex() const { return hitIndex_; }
  std::string currentHit() const { return hitIndex_ >= 0 ? hits_[static_cast<size_t>(hitIndex_)] : std::string(); }
  void nextHit();
  void previousHit();

  // Lights the items with these traced origins (kept across re-layouts); returns how many.
  int highlightOrigins(const std::set<int64_t>& traced);
  // What the properties panel shows for an item, as plain text lines.
  QStringList describe(const std::string& item) const;
  QStringList describeScope(const std::string& scope, bool open) const;

signals:
  void nodeClicked(const QString& graph, const QString& item);
  void focusToggled();
  // "Why not fused?" asked of two selected nodes (the fused pane's context menu).
  void whyNotFusedRequested(const QString& graph, const QString& a, const QString& b);
  void layoutShown();  // a graph or a re-layout is drawn
  // A scope opened or folded again, with what the properties panel should now say of it (the box
  // described before is gone from the drawing).
  void scopeToggled(const QString& scope, const QStringList& description);

private:
  void show(int index);
  void relayout();
  void draw();
  void goToHit();
  void onDoubleClick(const QString& item);
  void onContextMenu(const QString& item, const QString& cluster, const QPoint& at);
  PaneGraph* current();
  const PaneGraph* current() const;

  QLabel* title_;
  QComboBox* choice_;
  QLineEdit* search_;
  QLabel* found_;
  QToolButton* focus_;
  GraphView* view_;
  QString emptyHint_;
  std::vector<PaneGraph> graphs_;
  std::map<std::string, GraphLayout> layouts_;  // by dotHash of the folded text
  QThreadPool pool_;
  int generation_ = 0;
  bool pending_ = false;
  std::string centreOn_;       // after the pending layout: the item to bring into view
  std::string selectAfter_;    // ... and the node to select
  std::string centreScope_;    // ... or the opened scope to frame
  std::vector<std::string> selectAlso_;  // ... or several nodes to select
  std::vector<std::string> hits_;
  int hitIndex_ = -1;
  std::set<int64_t> lit_;
  bool askWhyNotFused_ = false;
};

}  // namespace fusebox

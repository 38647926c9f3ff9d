#include "views/graph_pane.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

namespace fusebox {

GraphPane::GraphPane(const QString& title, const QString& emptyHint, QWidget* parent)
    : QWidget(parent), title_(new QLabel("<b>" + title + "</b>")), choice_(new QComboBox), search_(new QLineEdit), found_(new QLabel),
      view_(new GraphView), emptyHint_(emptyHint) {
  choice_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  search_->setPlaceholderText("search op…");
  search_->setClearButtonEnabled(true);
  auto* fit = new QToolButton;
  fit->setText("Fit");
  fit->setToolTip("Fit the whole graph in the pane (wheel zooms, drag pans)");
  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(0, 0, 0, 0);
  bar->addWidget(title_);
  bar->addWidget(choice_, 1);
  bar->addWidget(search_, 1);
  bar->addWidget(found_);
  bar->addWidget(fit);
  auto* col = new QVBoxLayout(this);
  col->setContentsMargins(2, 2, 2, 2);
  col->addLayout(bar);
  col->addWidget(view_, 1);
  connect(fit, &QToolButton::clicked, view_, &GraphView::fitAll);
  connect(choice_, qOverload<int>(&QComboBox::currentIndexChanged), this, &GraphPane::show);
  connect(search_, &QLineEdit::textChanged, this, [this](const QString& t) {
    int n = view_->search(t);
    found_->setText(t.isEmpty() ? "" : QString::number(n));
  });
  connect(view_, &GraphView::nodeClicked, this, [this](const QString& node) { emit nodeClicked(currentGraph(), node); });
  clear();
}

void GraphPane::clear() {
  graphs_.clear();
  choice_->blockSignals(true);
  choice_->clear();
  choice_->blockSignals(false);
  choice_->setEnabled(false);
  view_->clearGraph(emptyHint_);
}

void GraphPane::setGraphs(const std::vector<PaneGraph>& graphs) {
  QString keep = currentGraph();
  graphs_ = graphs;
  choice_->blockSignals(true);
  choice_->clear();
  int pick = 0;
  for (size_t i = 0; i < graphs_.size(); ++i) {
    choice_->addItem(QString("%1 (%2 nodes)").arg(graphs_[i].name).arg(graphs_[i].layout.nodes.size()));
    if (graphs_[i].name == keep) pick = static_cast<int>(i);
  }
  choice_->setCurrentIndex(pick);
  choice_->blockSignals(false);
  choice_->setEnabled(graphs_.size() > 1);
  show(pick);
}

void GraphPane::addGraphs(const std::vector<PaneGraph>& graphs) {
  std::vector<PaneGraph> all = graphs_;
  for (const PaneGraph& g : graphs) {
    auto same = std::find_if(all.begin(), all.end(), [&](const PaneGraph& h) { return h.name == g.name; });
    if (same != all.end()) *same = g;
    else all.push_back(g);
  }
  setGraphs(all);
}

QString GraphPane::currentGraph() const {
  int i = choice_->currentIndex();
  return i >= 0 && i < static_cast<int>(graphs_.size()) ? graphs_[i].name : QString();
}

void GraphPane::show(int index) {
  if (index < 0 || index >= static_cast<int>(graphs_.size())) return view_->clearGraph(emptyHint_);
  view_->setGraph(graphs_[index].layout, graphs_[index].origins);
}

}  // namespace fusebox

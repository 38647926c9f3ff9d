#include "views/graph_pane.h"

#include <QComboBox>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QShortcut>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

namespace fusebox {

GraphPane::GraphPane(const QString& title, const QString& emptyHint, QWidget* parent)
    : QWidget(parent), title_(new QLabel("<b>" + title + "</b>")), choice_(new QComboBox), search_(new QLineEdit), found_(new QLabel),
      focus_(new QToolButton), view_(new GraphView), emptyHint_(emptyHint) {
  pool_.setMaxThreadCount(1);  // one layout at a time per pane; a newer request supersedes
  choice_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  choice_->setMinimumContentsLength(8);
  search_->setPlaceholderText("find op, name, scope, buffer, kernel");
  search_->setToolTip("Finds nodes by op, node name, module scope (layer2.0.conv1), buffer or kernel name.\n"
                      "Enter: next match, Shift+Enter: previous; folded scopes open to show it.");
  search_->setClearButtonEnabled(true);
  found_->setMinimumWidth(48);
  auto* prev = new QToolButton;
  prev->setText("◀");
  prev->setToolTip("Previous match (Shift+Enter)");
  auto* next = new QToolButton;
  next->setText("▶");
  next->setToolTip("Next match (Enter)");
  auto* scopes = new QToolButton;
  scopes->setText("Scopes");
  scopes->setToolTip("Module scopes are folded into boxes: double-click a box to open it, double-click inside an open scope to fold it");
  scopes->setPopupMode(QToolButton::InstantPopup);
  auto* menu = new QMenu(scopes);
  menu->addAction("Expand all", this, [this] { expandToDepth(1000); });
  menu->addAction("Collapse all", this, [this] { expandToDepth(0); });
  for (int d = 1; d <= 3; ++d) menu->addAction(QString("Open to depth %1").arg(d), this, [this, d] { expandToDepth(d); });
  scopes->setMenu(menu);
  auto* fit = new QToolButton;
  fit->setText("Fit");
  fit->setToolTip("Fit the whole graph in the pane (wheel zooms, drag pans)");
  focus_->setText("⤢");
  focus_->setToolTip("Focus: give this pane the whole width (again: back to side by side)");
  focus_->setCheckable(true);
  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(0, 0, 0, 0);
  bar->setSpacing(2);
  bar->addWidget(title_);
  bar->addWidget(choice_);
  bar->addWidget(focus_);
  auto* row2 = new QHBoxLayout;
  row2->setContentsMargins(0, 0, 0, 0);
  row2->setSpacing(2);
  row2->addWidget(search_, 1);
  row2->addWidget(found_);
  row2->addWidget(prev);
  row2->addWidget(next);
  row2->addWidget(scopes);
  row2->addWidget(fit);
  bar->addStretch(1);
  auto* col = new QVBoxLayout(this);
  col->setContentsMargins(2, 2, 2, 2);
  col->setSpacing(2);
  col->addLayout(bar);
  col->addLayout(row2);
  col->addWidget(view_, 1);
  connect(fit, &QToolButton::clicked, view_, &GraphView::fitAll);
  connect(focus_, &QToolButton::clicked, this, &GraphPane::focusToggled);
  connect(prev, &QToolButton::clicked, this, &GraphPane::previousHit);
  connect(next, &QToolButton::clicked, this, &GraphPane::nextHit);
  connect(choice_, qOverload<int>(&QComboBox::currentIndexChanged), this, &GraphPane::show);
  connect(search_, &QLineEdit::textChanged, this, [this](const QString& t) {
    const ScopeFolding* f = folding();
    hits_ = f ? f->find(t.toStdString()) : std::vector<std::string>{};
    hitIndex_ = hits_.empty() ? -1 : 0;
    goToHit();
  });
  connect(search_, &QLineEdit::returnPressed, this, [this] {
    if (QGuiApplication::keyboardModifiers() & Qt::ShiftModifier) previousHit();
    else nextHit();
  });
  connect(view_, &GraphView::nodeClicked, this, [this](const QString& item) { emit nodeClicked(currentGraph(), item); });
  connect(view_, &GraphView::nodeDoubleClicked, this, &GraphPane::onDoubleClick);
  connect(view_, &GraphView::clusterDoubleClicked, this, [this](const QString& cluster) {
    if (const ScopeFolding* f = folding(); f && !f->clusterScope(cluster.toStdString()).empty()) collapse(f->clusterScope(cluster.toStdString()));
  });
  connect(view_, &GraphView::contextMenuRequested, this, &GraphPane::onContextMenu);
  clear();
}

GraphPane::~GraphPane() { pool_.waitForDone(); }  // a layout in flight posts back to this pane

QString GraphPane::title() const { return title_->text().remove("<b>").remove("</b>"); }

void GraphPane::clear() {
  graphs_.clear();
  hits_.clear();
  hitIndex_ = -1;
  lit_.clear();
  ++generation_;  // a layout still running is for a graph no longer here
  pending_ = false;
  choice_->blockSignals(true);
  choice_->clear();
  choice_->blockSignals(false);
  choice_->setEnabled(false);
  search_->blockSignals(true);
  search_->clear();
  search_->blockSignals(false);
  found_->clear();
  view_->clearGraph(emptyHint_);
}

void GraphPane::setGraphs(const std::vector<PaneGraph>& graphs) {
  QString keep = currentGraph();
  graphs_ = graphs;
  for (const PaneGraph& g : graphs_)
    if (g.folding) layouts_[dotHash(g.folding->foldedDot(g.expanded))] = g.layout;
  choice_->blockSignals(true);
  choice_->clear();
  int pick = 0;
  for (size_t i = 0; i < graphs_.size(); ++i) {
    size_t n = graphs_[i].folding ? graphs_[i].folding->graph().nodes.size() : graphs_[i].layout.nodes.size();
    choice_->addItem(QString("%1 (%2)").arg(graphs_[i].name).arg(n));
    choice_->setItemData(static_cast<int>(i), QString("%1: %2 nodes").arg(graphs_[i].name).arg(n), Qt::ToolTipRole);
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
  const PaneGraph* g = current();
  return g ? g->name : QString();
}

PaneGraph* GraphPane::current() {
  int i = choice_->currentIndex();
  return i >= 0 && i < static_cast<int>(graphs_.size()) ? &graphs_[i] : nullptr;
}

const PaneGraph* GraphPane::current() const { return const_cast<GraphPane*>(this)->current(); }

const ScopeFolding* GraphPane::folding() const {
  const PaneGraph* g = current();
  return g ? g->folding.get() : nullptr;
}

std::set<std::string> GraphPane::expanded() const {
  const PaneGraph* g = current();
  return g ? g->expanded : std::set<std::string>{};
}

void GraphPane::show(int index) {
  if (index < 0 || index >= static_cast<int>(graphs_.size())) return view_->clearGraph(emptyHint_);
  ++generation_;
  pending_ = false;
  draw();
  view_->fitWidth();
  if (!search_->text().isEmpty()) emit search_->textChanged(search_->text());  // the hits of this graph
}

void GraphPane::draw() {
  PaneGraph* g = current();
  if (!g) return;
  std::map<std::string, std::vector<int64_t>> itemOrigins;  // what each drawn item stands for
  if (g->folding)
    for (const DotNode& n : g->folding->graph().nodes) {
      auto o = g->origins.find(n.name);
      if (o == g->origins.end()) continue;
      std::vector<int64_t>& into = itemOrigins[g->folding->visibleItem(n.name, g->expanded)];
      into.insert(into.end(), o->second.begin(), o->second.end());
    }
  for (auto& [item, o] : itemOrigins) {
    std::sort(o.begin(), o.end());
    o.erase(std::unique(o.begin(), o.end()), o.end());
  }
  QTransform keep = view_->transform();
  view_->setGraph(g->layout, itemOrigins);
  if (!centreOn_.empty() || !selectAfter_.empty()) view_->setTransform(keep);  // a fold change keeps the zoom
  if (!lit_.empty()) view_->highlightOrigins(lit_);
  if (!centreOn_.empty()) view_->centreOn(centreOn_);
  if (g->folding && !centreScope_.empty()) {  // an opened scope: the whole of it in view if it fits
    std::string cluster = g->folding->clusterOf(centreScope_);
    for (const LayoutCluster& c : g->layout.clusters)
      if (!cluster.empty() && c.name == cluster) view_->showRect(QRectF(c.x0, c.y0, c.x1 - c.x0, c.y1 - c.y0));
  }
  centreScope_.clear();
  if (!selectAfter_.empty()) view_->selectItems(selectAlso_.empty() ? std::vector<std::string>{selectAfter_} : selectAlso_);
  selectAlso_.clear();
  centreOn_.clear();
  selectAfter_.clear();
  emit layoutShown();
}

void GraphPane::relayout() {
  PaneGraph* g = current();
  if (!g || !g->folding) return;
  std::string dot = g->folding->foldedDot(g->expanded);
  std::string key = dotHash(dot);
  int generation = ++generation_;
  if (auto it = layouts_.find(key); it != layouts_.end()) {
    pending_ = false;
    g->layout = it->second;
    return draw();
  }
  pending_ = true;
  found_->setText("laying out…");
  pool_.start([this, dot, key, generation] {
    GraphLayout l;
    QString error;
    try {
      l = layoutDot(dot);
    } catch (const std::exception& e) {
      error = e.what();
    }
    QMetaObject::invokeMethod(
        this,
        [this, l, error, key, generation] {
          if (generation != generation_) return;  // superseded by a newer fold or another graph
          pending_ = false;
          found_->clear();
          if (!error.isEmpty()) {
            found_->setText("too large");
            found_->setToolTip(error + "\nCollapse some scopes (Scopes ▸ Collapse all) to draw it.");
            emit layoutShown();
            return;
          }
          layouts_[key] = l;
          if (PaneGraph* g = current()) g->layout = l;
          draw();
          if (hitIndex_ >= 0) found_->setText(QString("%1 of %2").arg(hitIndex_ + 1).arg(hits_.size()));
        },
        Qt::QueuedConnection);
  });
}

void GraphPane::setExpanded(const std::set<std::string>& scopes, const std::string& centreOn) {
  PaneGraph* g = current();
  if (!g || !g->folding || g->expanded == scopes) return;
  g->expanded = scopes;
  centreOn_ = centreOn;
  relayout();
}

void GraphPane::expand(const std::string& scope) {
  PaneGraph* g = current();
  if (!g || !g->folding) return;
  std::set<std::string> e = g->expanded;
  e.insert(scope);
  std::vector<std::string> inside = g->folding->members(scope);
  centreScope_ = scope;
  setExpanded(e, inside.empty() ? "" : g->folding->visibleItem(inside.front(), e));
  emit scopeToggled(QString::fromStdString(scope), describeScope(scope, true));
}

void GraphPane::collapse(const std::string& scope) {
  PaneGraph* g = current();
  if (!g || !g->folding) return;
  std::set<std::string> e = g->expanded;
  for (auto it = e.begin(); it != e.end();)  // its open children fold with it
    it = inScope(*it, scope) ? e.erase(it) : std::next(it);
  std::vector<std::string> inside = g->folding->members(scope);
  setExpanded(e, inside.empty() ? "" : g->folding->visibleItem(inside.front(), e));
  emit scopeToggled(QString::fromStdString(scope), describeScope(scope, false));
}

void GraphPane::expandToDepth(int depth) {
  if (const ScopeFolding* f = folding()) setExpanded(f->expansionToDepth(depth));
}

bool GraphPane::openScope(const std::string& scope) {
  PaneGraph* g = current();
  if (!g || !g->folding) return false;
  std::vector<std::string> nodes = g->folding->recordedIn(scope);
  if (nodes.empty()) return false;
  std::set<std::string> e = g->expanded;
  for (const std::string& level : scopeLevels(scope))
    if (!g->folding->clusterOf(level).empty()) e.insert(level);
  for (const std::string& n : nodes) e = g->folding->revealing(n, e);  // a scope of one op: its parents
  centreScope_ = scope;
  setExpanded(e, g->folding->visibleItem(nodes.front(), e));
  return true;
}

void GraphPane::reveal(const std::string& node) {
  PaneGraph* g = current();
  if (!g || !g->folding) return;
  std::set<std::string> e = g->folding->revealing(node, g->expanded);
  if (e == g->expanded) return view_->selectItems({node});
  g->expanded = e;
  centreOn_ = node;
  selectAfter_ = node;
  relayout();
}

void GraphPane::revealAll(const std::vector<std::string>& nodes) {
  PaneGraph* g = current();
  if (!g || !g->folding || nodes.empty()) return;
  std::set<std::string> e = g->expanded;
  for (const std::string& n : nodes) e = g->folding->revealing(n, e);
  if (e == g->expanded) {
    view_->selectItems(nodes);
    return;
  }
  g->expanded = e;
  centreOn_ = nodes.front();
  selectAfter_ = nodes.front();
  selectAlso_ = nodes;
  relayout();
}

bool GraphPane::showGraphNamed(const QString& name) {
  for (size_t i = 0; i < graphs_.size(); ++i)
    if (graphs_[i].name == name) {
      if (choice_->currentIndex() != static_cast<int>(i)) choice_->setCurrentIndex(static_cast<int>(i));
      return true;
    }
  return false;
}

QString GraphPane::nodeLabel(const QString& graph, const std::string& node) const {
  for (const PaneGraph& g : graphs_)
    if (g.name == graph && g.folding)
      for (const DotNode& n : g.folding->graph().nodes)
        if (n.name == node) return QString::fromStdString(n.label).replace('\n', ' ');
  return {};
}

QString GraphPane::nodeKernel(const QString& graph, const std::string& node) const {
  for (const PaneGraph& g : graphs_)
    if (g.name == graph && g.folding)
      for (const DotNode& n : g.folding->graph().nodes)
        if (n.name == node && !n.cluster.empty()) {
          for (const DotCluster& c : g.folding->graph().clusters)
            if (c.name == n.cluster) return QString::fromStdString(c.label).section(' ', 0, 0);  // "kernel3 (2 nodes)"
          return QString::fromStdString(n.cluster);
        }
  return {};
}

std::vector<int64_t> GraphPane::nodeOrigins(const QString& graph, const std::string& node) const {
  for (const PaneGraph& g : graphs_)
    if (g.name == graph)
      if (auto it = g.origins.find(node); it != g.origins.end()) return it->second;
  return {};
}

std::string GraphPane::itemOf(const std::string& node) const {
  const PaneGraph* g = current();
  return g && g->folding ? g->folding->visibleItem(node, g->expanded) : node;
}

std::vector<std::string> GraphPane::nodesOf(const std::string& item) const {
  const PaneGraph* g = current();
  if (!g || !g->folding) return {item};
  std::string scope = g->folding->boxScope(item);
  return scope.empty() ? std::vector<std::string>{item} : g->folding->members(scope);
}

void GraphPane::goToHit() {
  if (search_->text().isEmpty()) {
    found_->clear();
    view_->selectItems({});
    return;
  }
  if (hitIndex_ < 0) {
    found_->setText("0 found");
    view_->selectItems({});
    return;
  }
  found_->setText(QString("%1 of %2").arg(hitIndex_ + 1).arg(hits_.size()));
  reveal(hits_[hitIndex_]);
}

void GraphPane::nextHit() {
  if (hits_.empty()) return;
  hitIndex_ = (hitIndex_ + 1) % static_cast<int>(hits_.size());
  goToHit();
}

void GraphPane::previousHit() {
  if (hits_.empty()) return;
  hitIndex_ = (hitIndex_ + static_cast<int>(hits_.size()) - 1) % static_cast<int>(hits_.size());
  goToHit();
}

int GraphPane::highlightOrigins(const std::set<int64_t>& traced) {
  lit_ = traced;
  return view_->highlightOrigins(traced);
}

QStringList GraphPane::describe(const std::string& item) const {
  const PaneGraph* g = current();
  QStringList lines;
  if (!g) return lines;
  lines << QString("%1 pane, graph %2").arg(title(), g->name);
  if (g->folding) {
    if (std::string scope = g->folding->boxScope(item); !scope.empty()) return describeScope(scope, false);
    lines << "node: " + QString::fromStdString(item);
    lines << view_->tooltipOf(item).split('\n');
    if (view_->labelOf(item) != view_->tooltipOf(item)) lines << "label: " + view_->labelOf(item).replace('\n', "  ");
    std::string placed = g->folding->placement(item);
    if (!placed.empty()) lines << "drawn in scope: " + QString::fromStdString(placed);
  }
  return lines;
}

QStringList GraphPane::describeScope(const std::string& scope, bool open) const {
  const PaneGraph* g = current();
  if (!g || !g->folding) return {};
  return {QString("%1 pane, graph %2").arg(title(), g->name), (open ? "opened scope: " : "folded scope: ") + QString::fromStdString(scope),
          QString::fromStdString(g->folding->describeScope(scope)),
          open ? "(drawn inside its frame; double-click inside the frame to fold it again)" : "(double-click to open it)"};
}

void GraphPane::onDoubleClick(const QString& item) {
  const ScopeFolding* f = folding();
  if (!f) return;
  std::string scope = f->boxScope(item.toStdString());
  if (!scope.empty()) expand(scope);
}

void GraphPane::onContextMenu(const QString& item, const QString& cluster, const QPoint& at) {
  const ScopeFolding* f = folding();
  QMenu menu;
  if (f) {
    std::string box = f->boxScope(item.toStdString());
    if (!box.empty()) menu.addAction("Expand " + QString::fromStdString(box), this, [this, box] { expand(box); });
    std::string open = f->clusterScope(cluster.toStdString());
    if (open.empty() && box.empty() && !item.isEmpty()) open = f->placement(item.toStdString());
    if (!open.empty() && expanded().count(open)) menu.addAction("Collapse " + QString::fromStdString(open), this, [this, open] { collapse(open); });
    menu.addSeparator();
    menu.addAction("Expand all", this, [this] { expandToDepth(1000); });
    menu.addAction("Collapse all", this, [this] { expandToDepth(0); });
  }
  std::vector<std::string> picked = view_->selectedItems();
  if (askWhyNotFused_) {
    QAction* why = menu.addAction("Why not fused? (the two selected nodes)");
    if (picked.size() == 2 && f && f->boxScope(picked[0]).empty() && f->boxScope(picked[1]).empty()) {
      QString a = QString::fromStdString(picked[0]), b = QString::fromStdString(picked[1]);
      connect(why, &QAction::triggered, this, [this, a, b] { emit whyNotFusedRequested(currentGraph(), a, b); });
    } else {
      why->setEnabled(false);
      why->setToolTip("Select two nodes first (Ctrl+click)");
    }
    menu.addSeparator();
  }
  menu.addAction("Fit", view_, &GraphView::fitAll);
  menu.addAction(focus_->isChecked() ? "Back to side by side" : "Focus this pane", this, &GraphPane::focusToggled);
  menu.exec(at);
}

}  // namespace fusebox

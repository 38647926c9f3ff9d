#include "app/gui/main_window.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QResizeEvent>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QStatusTipEvent>
#include <QTabWidget>
#include <QTextBrowser>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>
#include <fstream>

#include "core/backend/backend.h"
#include "core/frontend/model_loader.h"
#include "core/pipeline/stage_table.h"
#include "report/html_report.h"
#include "report/session_summary.h"
#include "report/stage_view.h"
#include "sessions/session_store.h"
#include "views/code_view.h"
#include "views/compare_view.h"
#include "views/decision_view.h"
#include "views/graph_pane.h"
#include "views/partition_view.h"
#include "views/pdf_report.h"
#include "views/profile_view.h"
#include "views/session_browser.h"

namespace fusebox {

namespace {

// Whether `s` is the first stage the table draws in its pane: its graphs replace the pane's, a
// later stage's join them (the forward and backward graphs beside the joint graph).
bool firstInPane(const QString& stage) {
  std::optional<Stage> s = parseStage(stage.toStdString());
  if (!s) return true;
  for (const StageDescriptor& d : stageTable())
    if (d.pane == stageDescriptor(*s).pane) return d.stage == *s;
  return true;
}

}  // namespace

MainWindow::MainWindow(const QString& sessionPath, QWidget* parent) : QMainWindow(parent), sessionPath_(sessionPath) {
  qRegisterMetaType<CompileRequest>();
  qRegisterMetaType<StageResult>();
  worker_ = new PipelineWorker;
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  connect(this, &MainWindow::requestStart, worker_, &PipelineWorker::start);
  connect(this, &MainWindow::requestStep, worker_, &PipelineWorker::step);
  connect(this, &MainWindow::requestRunAll, worker_, &PipelineWorker::runAll);
  connect(this, &MainWindow::requestOpenStored, worker_, &PipelineWorker::openStored);
  connect(this, &MainWindow::requestReconfigure, worker_, &PipelineWorker::reconfigure);
  connect(worker_, &PipelineWorker::reconfigured, this, [this](const QString& first) {
    rerunFrom_ = first;
    std::optional<Stage> from = parseStage(first.toStdString());
    QStringList kept;
    for (const StageDescriptor& d : stageTable())
      if (done_.contains(d.name) && from && static_cast<int>(d.stage) < static_cast<int>(*from)) kept << d.name;
    done_ = kept;
    // What was selected or answered belongs to the old config's graphs and kernels.
    lightOrigins({});
    properties_->setPlainText("The config changed: the stages from " + first + " on run again. Select a node or a kernel.");
    profile_->clear("The config changed: press Run & profile to profile the new code.");
    statusBar()->showMessage(QString("config changed: running again from the %1 stage, the earlier stages kept").arg(first));
    refreshPipelineBar();
  });
  connect(worker_, &PipelineWorker::storedSessionOpened, this, &MainWindow::onStoredSessionOpened);
  connect(worker_, &PipelineWorker::sessionStarted, this, [this](qlonglong id, const QString& path) {
    session_ = id;
    try {
      if (!reader_ || reader_->path() != path.toStdString())
        reader_ = std::make_unique<SessionStore>(SessionStore::openReadOnly(path.toStdString(), true));
    } catch (const std::exception& e) {
      showError("Cannot read the session file", e.what());  // the views then stay empty; the worker still records
    }
    statusBar()->showMessage(QString("session %1 in %2").arg(id).arg(path));
  });
  connect(worker_, &PipelineWorker::stageDone, this, &MainWindow::onStageDone);
  connect(worker_, &PipelineWorker::progress, this, [this](const QString& what) {
    if (busy_) statusBar()->showMessage(what);
  });
  connect(worker_, &PipelineWorker::failed, this, &MainWindow::onFailed);
  connect(worker_, &PipelineWorker::compiled, this, [this](const QString& problem) {
    if (problem.isEmpty()) showListings();  // LLVM IR and asm, or PTX and SASS, beside their source
    else statusBar()->showMessage("the compiled listings are not shown: " + problem);
  });
  thread_.start();
  connect(&runner_, &QProcess::finished, this, &MainWindow::onRunFinished);
  poll_ = new QTimer(this);
  poll_->setInterval(200);
  connect(poll_, &QTimer::timeout, this, &MainWindow::pollProfile);
  buildUi();
  reset();
}

MainWindow::~MainWindow() {
  if (runner_.state() != QProcess::NotRunning) {
    runner_.kill();
    runner_.waitForFinished(2000);
  }
  thread_.quit();
  thread_.wait();
}

void MainWindow::buildUi() {
  setWindowTitle("Fusebox — ML compiler inspector");
  auto* tb = addToolBar("Pipeline");
  tb->setMovable(false);
  model_ = new QComboBox;
  for (const BuiltinModel& m : builtinModels()) model_->addItem(QString::fromStdString(std::string(m.name)));
  model_->setCurrentText(demoModelName());
  model_->setToolTip("Built-in model (File ▸ Open model… for a .fbx or .onnx file)");
  train_ = new QCheckBox("train");
  train_->setChecked(true);
  train_->setToolTip("Training step: joint forward/backward graph, partitioned (AOTAutograd)");
  target_ = new QComboBox;
  for (const Backend* b : backends()) target_->addItem(b->name());
  partitioner_ = new QComboBox;
  partitioner_->addItems({"mincut", "default"});
  fusion_ = new QCheckBox("fusion");
  fusion_->setChecked(true);
  tb->addWidget(new QLabel(" Model "));
  tb->addWidget(model_);
  tb->addWidget(train_);
  tb->addWidget(new QLabel(" target "));
  tb->addWidget(target_);
  tb->addWidget(new QLabel(" partitioner "));
  tb->addWidget(partitioner_);
  tb->addWidget(fusion_);
  tb->addSeparator();
  stepButton_ = new QPushButton("Step");
  stepButton_->setToolTip("Run the next stage");
  runAllButton_ = new QPushButton("Run all");
  auto* resetButton = new QPushButton("Reset");
  tb->addWidget(stepButton_);
  tb->addWidget(runAllButton_);
  tb->addWidget(resetButton);
  tb->addSeparator();
  iterations_ = new QSpinBox;
  iterations_->setRange(1, 100000);
  iterations_->setValue(50);
  iterations_->setSuffix(" iters");
  runButton_ = new QPushButton("Run && profile");
  runButton_->setToolTip("Compile the generated code and run it in a separate process; the profile fills in live");
  tb->addWidget(iterations_);
  tb->addWidget(runButton_);
  connect(stepButton_, &QPushButton::clicked, this, &MainWindow::stepStage);
  connect(runAllButton_, &QPushButton::clicked, this, &MainWindow::runAllStages);
  connect(resetButton, &QPushButton::clicked, this, &MainWindow::reset);
  connect(runButton_, &QPushButton::clicked, this, [this] { startProfileRun(iterations_->value()); });
  connect(model_, &QComboBox::currentTextChanged, this, &MainWindow::reset);
  connect(train_, &QCheckBox::toggled, this, &MainWindow::reset);
  for (QComboBox* c : {target_, partitioner_}) connect(c, &QComboBox::currentTextChanged, this, &MainWindow::configChanged);
  connect(fusion_, &QCheckBox::toggled, this, &MainWindow::configChanged);

  readyLine_ = new QLabel;
  statusBar()->addWidget(readyLine_);
  progress_ = new QProgressBar;
  progress_->setMaximumWidth(260);
  progress_->setTextVisible(true);
  progress_->hide();
  statusBar()->addPermanentWidget(progress_);

  auto* file = menuBar()->addMenu("&File");
  file->addAction("Open model (.fbx, .onnx)…", this, [this] {
    QString f = QFileDialog::getOpenFileName(this, "Open model", QString(), "Models (*.fbx *.onnx);;Fusebox models (*.fbx);;ONNX models (*.onnx)");
    if (!f.isEmpty()) setModel(f);
  });
  file->addAction("Open session file (.fbs)…", this, [this] {
    QString f = QFileDialog::getOpenFileName(this, "Open session file", QFileInfo(sessionPath_).absolutePath(), "Fusebox sessions (*.fbs);;All files (*)");
    if (!f.isEmpty()) openSessionBrowser(f);
  });
  file->addAction("Sessions of this file…", this, [this] { openSessionBrowser(sessionPath_); });
  QMenu* recent = file->addMenu("Recent session files");
  connect(recent, &QMenu::aboutToShow, this, [this, recent] {
    recent->clear();
    for (const QString& f : recentSessionFiles()) recent->addAction(f, this, [this, f] { openSessionBrowser(f); });
    if (recent->isEmpty()) recent->addAction("(none yet)")->setEnabled(false);
  });
  file->addAction("Export report (HTML or PDF)…", this, [this] {
    QString f = QFileDialog::getSaveFileName(this, "Export report", "fusebox-report.html", "HTML (*.html);;PDF (*.pdf)");
    if (!f.isEmpty()) exportReport(f);
  });
  file->addAction("Quit", qApp, &QApplication::quit);

  auto* central = new QWidget;
  auto* col = new QVBoxLayout(central);
  col->setContentsMargins(4, 4, 4, 4);
  hint_ = new QLabel(
      "<b>How to read this window:</b> press <b>Step</b> to run the next compile stage (or <b>Run all</b>). "
      "The panes show the <b>traced</b> model, the <b>joint</b> forward+backward graph (AOTAutograd; pick forward/backward after "
      "partitioning), the <b>prims</b> graph (PrimTorch decomposition) and the <b>fused loop IR</b> (each box around nodes is one "
      "generated kernel). Click any node: everything it came from or produced lights up in every pane and in the code. "
      "<b>Run &amp; profile</b> executes the generated code and charts each kernel live. The tabs below hold the generated "
      "<b>code</b>, the <b>profile</b>, every fusion <b>decision</b> with its reason, and the <b>comparison</b> of two runs.");
  hint_->setWordWrap(true);
  hint_->setStyleSheet("QLabel { background: #eef4fb; border: 1px solid #c5d7ee; padding: 6px; }");
  auto* hideHint = new QToolButton;
  hideHint->setText("✕");
  hideHint->setToolTip("Hide this help (Help ▸ How to read this window shows it again)");
  auto* hintRow = new QHBoxLayout;
  hintRow->setSpacing(0);
  hintRow->addWidget(hint_, 1);
  hintRow->addWidget(hideHint, 0, Qt::AlignTop);
  hintBox_ = new QWidget;
  hintBox_->setLayout(hintRow);
  hintRow->setContentsMargins(0, 0, 0, 0);
  col->addWidget(hintBox_);
  hintBox_->setVisible(!QSettings().value("hideHelpBanner", false).toBool());
  connect(hideHint, &QToolButton::clicked, this, [this] { showHelpBanner(false); });
  auto* help = menuBar()->addMenu("&Help");
  help->addAction("How to read this window", this, [this] { showHelpBanner(true); });
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel("Pipeline:"));
  for (const StageDescriptor& s : stageTable()) {
    auto* l = new QLabel(s.name);
    l->setAlignment(Qt::AlignCenter);
    l->setMinimumWidth(80);
    stageLabels_.push_back(l);
    bar->addWidget(l);
  }
  bar->addStretch(1);
  col->addLayout(bar);

  auto* vsplit = new QSplitter(Qt::Vertical);
  auto* hsplit = new QSplitter(Qt::Horizontal);
  for (int i = 0; i < static_cast<int>(graphPanes().size()); ++i) {
    auto* p = new GraphPane(graphPanes()[i].title, graphPanes()[i].emptyHint);
    p->setAskWhyNotFused(i + 1 == static_cast<int>(graphPanes().size()));  // the fused loop IR
    panes_.push_back(p);
    hsplit->addWidget(p);
    connect(p, &GraphPane::nodeClicked, this, [this, i](const QString&, const QString& node) { selectNode(i, node); });
    connect(p, &GraphPane::scopeToggled, this, [this](const QString&, const QStringList& description) {
      QString html;  // the box Properties described is gone: say what became of it
      for (const QString& l : description) html += "<div>" + l.toHtmlEscaped() + "</div>";
      properties_->setHtml(html);
    });
    connect(p, &GraphPane::focusToggled, this, [this, i] { focusPane(focused_ == i ? -1 : i); });
    connect(p, &GraphPane::whyNotFusedRequested, this, [this](const QString& graph, const QString& a, const QString& b) {
      QString answer = whyNotFused(graph, a, b);
      properties_->setPlainText("Why not fused?\n\n" + answer);
      statusBar()->showMessage(answer);
    });
  }
  vsplit->addWidget(hsplit);
  tabs_ = new QTabWidget;
  code_ = new CodeView;
  profile_ = new ProfileView;
  scheduleText_ = new QPlainTextEdit;
  scheduleText_->setReadOnly(true);
  scheduleText_->setLineWrapMode(QPlainTextEdit::NoWrap);
  scheduleText_->setFont(QFont("Monospace", 9));
  compare_ = new CompareView;
  tabs_->addTab(code_, "Code");
  // in a scroll area: its table, timeline and charts need 220 px, which a laptop's split has not
  auto* profilePage = new QScrollArea;
  profilePage->setWidget(profile_);
  profilePage->setWidgetResizable(true);
  profilePage->setFrameShape(QFrame::NoFrame);
  profilePage->setMinimumHeight(80);
  tabs_->addTab(profilePage, "Profile");
  decisions_ = new DecisionView;
  auto* scheduleSplit = new QSplitter(Qt::Horizontal);
  scheduleSplit->addWidget(decisions_);
  scheduleSplit->addWidget(scheduleText_);
  scheduleSplit->setStretchFactor(0, 3);
  scheduleSplit->setStretchFactor(1, 2);
  tabs_->addTab(scheduleSplit, "Schedule && decisions");
  connect(decisions_, &DecisionView::pairClicked, this, &MainWindow::selectDecision);
  partitions_ = new PartitionView;
  tabs_->addTab(partitions_, "Partitions");
  tabs_->addTab(compare_, "Compare fusion");
  vsplit->addWidget(tabs_);
  vsplit->setStretchFactor(0, 3);
  vsplit->setStretchFactor(1, 2);
  vsplit->setSizes({560, 360});
  panesAndTabs_ = vsplit;
  connect(vsplit, &QSplitter::splitterMoved, this, [this] { splitterMoved_ = true; });
  col->addWidget(vsplit, 1);
  setCentralWidget(central);
  connect(code_, &CodeView::kernelClicked, this, [this](const QString& kernel, const std::vector<int64_t>& origins) {
    std::set<int64_t> traced(origins.begin(), origins.end());
    for (GraphPane* p : panes_) p->highlightOrigins(traced);
    QString linked = code_->linkStatus();
    statusBar()->showMessage(QString("%1: computes %2 traced node(s)").arg(kernel).arg(traced.size()) + (linked.isEmpty() ? "" : " · " + linked));
  });
  connect(code_, &CodeView::linked, this, [this](const QString& status) {
    if (!status.isEmpty()) statusBar()->showMessage(status);
  });
  auto* dock = new QDockWidget("Properties", this);
  dock->setObjectName("properties");
  dock->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable);
  properties_ = new QTextBrowser;
  properties_->setPlaceholderText("Click a node or a folded scope in any pane to see its op, types, attributes, scope, source "
                                  "location, traced origins and kernels here.");
  dock->setWidget(properties_);
  addDockWidget(Qt::RightDockWidgetArea, dock);
  resizeDocks({dock}, {260}, Qt::Horizontal);
  connect(profile_, &ProfileView::kernelClicked, this, &MainWindow::selectKernel);
  connect(compare_, &CompareView::compareWith, this, [this](int64_t id) { compareWith(id); });
  connect(compare_, &CompareView::exportRequested, this, [this] {
    QString f = QFileDialog::getSaveFileName(this, "Export comparison", "fusebox-comparison.html", "HTML (*.html);;PDF (*.pdf)");
    if (!f.isEmpty()) exportComparison(f);
  });
  // The screen it opens on, not 1600x1000 cut off on a 1366x768 laptop.
  QRect screenRect = screen() ? screen()->availableGeometry() : QRect(0, 0, 1600, 1000);
  resize(std::min(1600, screenRect.width()), std::min(1000, screenRect.height()));
}

// On a short window the graphs get 70% of the split (the code and tables below scroll), else 60%;
// once the user drags the split, theirs stands.
void MainWindow::resizeEvent(QResizeEvent* e) {
  QMainWindow::resizeEvent(e);
  splitForHeight();
}

void MainWindow::showEvent(QShowEvent* e) {
  QMainWindow::showEvent(e);
  if (!shownOnce_ && height() < 900 && !QSettings().contains("hideHelpBanner")) {  // its lines are the graphs' on a laptop
    hintBox_->setVisible(false);
    statusBar()->showMessage("New here? Help ▸ How to read this window explains the panes");
  }
  shownOnce_ = true;
  splitForHeight();
}

void MainWindow::splitForHeight() {
  QTimer::singleShot(0, this, [this] {  // after the layout has given the splitter its height
    if (splitterMoved_ || !panesAndTabs_ || !isVisible()) return;
    int total = panesAndTabs_->height();
    int graphs = total * (height() < 900 ? 70 : 60) / 100;
    panesAndTabs_->setSizes({graphs, total - graphs});
  });
}

int MainWindow::graphPaneHeight() const { return panes_.empty() ? 0 : panes_.front()->view()->height(); }

CompileRequest MainWindow::currentRequest() const {
  CompileRequest r;
  r.model = model_->currentText().toStdString();
  r.config.train = train_->isChecked();
  r.config.partitioner = partitioner_->currentText() == "default" ? Partitioner::Default : Partitioner::MinCut;
  r.config.schedule.fusion = fusion_->isChecked();
  r.config.target = target_->currentText().toStdString();
  r.sessionPath = sessionPath_;
  return r;
}

void MainWindow::setModel(const QString& model) {
  if (model_->findText(model) < 0) model_->addItem(model);
  model_->setCurrentText(model);
}

void MainWindow::setFusion(bool on) { fusion_->setChecked(on); }

void MainWindow::reset() {
  if (busy_) return;  // the worker is mid-stage; its results would land in a cleared window
  started_ = false;
  viewingStored_ = false;
  done_.clear();
  displayMs_.clear();
  failedStage_.clear();
  peakBytes_ = 0;
  for (GraphPane* p : panes_) p->clear();
  code_->clearAll();
  properties_->clear();
  scheduleText_->clear();
  decisions_->clear();
  partitions_->clear(train_->isChecked() ? "The partition stage has not run yet." : "Inference has no backward to partition: tick train to compare the partitioners.");
  decisionRecord_.clear();
  kernelRecord_.clear();
  compare_->clear("Compare fusion: run every stage, then pick another session of the same model (another config).");
  comparedWith_ = 0;
  profile_->clear("Not run yet: press Run & profile to compile the generated code and profile it (in a separate process).");
  profile_->setMemoryPlan({});
  // The resting line of the status bar (messages cover it while shown).
  readyLine_->setText(QString("Model %1 (%2): press Step to run the first stage, or Run all")
                          .arg(model_->currentText(), train_->isChecked() ? "training step" : "inference"));
  statusBar()->clearMessage();
  refreshPipelineBar();
}

void MainWindow::openStoredSession(const QString& path, qint64 id) {
  if (busy_) return;
  reset();
  viewingStored_ = true;
  started_ = true;  // nothing to start: the worker reads the file
  busy_ = runningAll_ = true;
  statusBar()->showMessage(QString("opening %1…").arg(path));
  refreshPipelineBar();
  emit requestOpenStored(path, id);
}

void MainWindow::onStoredSessionOpened(qlonglong id, const QString& path, const QString& model, const QString& config,
                                       const QString& target, int stages) {
  session_ = id;
  try {
    if (!reader_ || reader_->path() != path.toStdString())
      reader_ = std::make_unique<SessionStore>(SessionStore::openReadOnly(path.toStdString(), true));
  } catch (const std::exception& e) {
    showError("Cannot read the session file", e.what());
  }
  // The toolbar shows what the session was compiled from ("train target=cpu ... fusion=off");
  // busy_ keeps these changes from resetting the window.
  setModel(model);
  QStringList words = config.split(' ');
  train_->setChecked(words.value(0) == "train");
  fusion_->setChecked(!words.contains("fusion=off"));
  if (target_->findText(target) >= 0) target_->setCurrentText(target);
  QString what = QString("stored session %1 of %2 (%3, %4)").arg(id).arg(path, model, config);
  readyLine_->setText(what + ": Step or Run all compiles it again as a new session");
  if (stages == 0) {
    busy_ = runningAll_ = false;
    statusBar()->showMessage(what + ": no stage was recorded");
    refreshPipelineBar();
  }
}

void MainWindow::openSessionBrowser(const QString& path) {
  if (!browser_) {
    browser_ = new SessionBrowser(this);
    browser_->setConfirm(dialogs_);
    connect(browser_, &SessionBrowser::openRequested, this, [this](qint64 id) {
      browser_->hide();
      openStoredSession(browser_->file(), id);
    });
    connect(browser_, &SessionBrowser::annotateRequested, this,
            [this](qint64 id, const QString& name, const QString& notes, const QString& tags) {
              try {
                SessionStore::open(browser_->file().toStdString(), false).annotateSession(id, name.toStdString(), notes.toStdString(), tags.toStdString());
              } catch (const std::exception& e) {
                return showError("Cannot change the session", e.what());
              }
              refreshBrowser();
            });
    connect(browser_, &SessionBrowser::deleteRequested, this, [this](qint64 id) {
      if (reader_ && id == session_ && QFileInfo(QString::fromStdString(reader_->path())) == QFileInfo(browser_->file()))
        return showError("Cannot delete the session", "The window shows this session; open or start another one first.");
      try {
        SessionStore::open(browser_->file().toStdString(), false).deleteSession(id);
      } catch (const std::exception& e) {
        return showError("Cannot delete the session", e.what());
      }
      refreshBrowser();
    });
  }
  browser_->setConfirm(dialogs_);
  browser_->setFile(path, {});
  refreshBrowser();
  rememberSessionFile(path);
  browser_->show();
  browser_->raise();
}

void MainWindow::refreshBrowser() {
  if (!browser_) return;
  std::vector<SessionRow> rows;
  try {
    SessionStore store = SessionStore::openReadOnly(browser_->file().toStdString());
    std::map<int64_t, SessionStats> stats = store.sessionStats();
    for (const SessionInfo& s : store.sessions()) {
      const SessionStats& st = stats[s.id];
      auto q = [](const std::string& t) { return QString::fromStdString(t); };
      rows.push_back({s.id, q(s.name), q(s.model), q(s.config), q(s.target), q(s.created), q(s.tags), q(s.notes), st.kernels, st.runs, st.msPerStep});
    }
  } catch (const std::exception& e) {
    browser_->hide();
    return showError("Cannot open the session file", e.what());
  }
  browser_->setFile(browser_->file(), rows);
}

QStringList MainWindow::recentSessionFiles() const { return QSettings().value("recentSessionFiles").toStringList(); }

void MainWindow::rememberSessionFile(const QString& path) {
  QStringList recent = recentSessionFiles();
  QString full = QFileInfo(path).absoluteFilePath();
  recent.removeAll(full);
  recent.prepend(full);
  while (recent.size() > 8) recent.removeLast();
  QSettings().setValue("recentSessionFiles", recent);
}

void MainWindow::ensureStarted() {
  if (started_) return;
  started_ = true;
  liveConfig_ = currentRequest().config;
  emit requestStart(currentRequest());
}

void MainWindow::configChanged() {
  CompileRequest r = currentRequest();
  bool allDone = done_.size() == static_cast<int>(stageTable().size());
  std::optional<Stage> from = firstStageAffected(liveConfig_, r.config);
  if (started_ && !busy_ && !from) return;  // back to the config that runs
  if (busy_ || !started_ || viewingStored_ || !allDone || !from || *from == Stage::Trace) return reset();
  liveConfig_ = r.config;
  busy_ = runningAll_ = true;
  refreshPipelineBar();
  emit requestReconfigure(r);
}

void MainWindow::leaveStoredSession() {
  if (!viewingStored_ || busy_) return;
  reset();
}

void MainWindow::stepStage() {
  leaveStoredSession();
  if (busy_ || done_.size() == static_cast<int>(stageTable().size())) return;
  ensureStarted();
  busy_ = true;
  statusBar()->showMessage(QString("running the %1 stage…").arg(nextStageName()));
  refreshPipelineBar();
  emit requestStep();
}

void MainWindow::runAllStages() {
  leaveStoredSession();
  if (busy_) return;
  ensureStarted();
  busy_ = runningAll_ = true;
  statusBar()->showMessage(QString("running the %1 stage…").arg(nextStageName()));
  refreshPipelineBar();
  emit requestRunAll();
}

void MainWindow::onStageDone(const StageResult& r) {
  failedStage_.clear();
  done_ << r.stage;
  // The stages the config skips (inference: joint, partition) count as done once reached.
  PipelineConfig config = currentRequest().config;
  for (const StageDescriptor& d : stageTable())
    if (!done_.contains(d.name)) {
      if (d.applies(config)) break;
      done_ << d.name;
    }
  QElapsedTimer draw;
  draw.start();
  if (r.pane >= 0 && firstInPane(r.stage)) panes_[r.pane]->setGraphs(r.graphs);
  else if (r.pane >= 0) panes_[r.pane]->addGraphs(r.graphs);
  displayMs_[r.stage] = r.prepareMs + static_cast<double>(draw.nsecsElapsed()) / 1e6;
  if (!r.text.isEmpty()) scheduleText_->setPlainText(r.text);
  // The schedule stage replaces the decisions even when it made none (fusion off): a re-run from
  // the schedule must not leave the previous config's decisions on show.
  if (r.stage == "schedule" || !r.decisions.empty()) {
    decisionRecord_ = r.decisions;
    GraphPane* fused = panes_[static_cast<size_t>(graphPanes().size() - 1)];
    std::vector<DecisionRow> rows;
    for (const StoredDecision& d : r.decisions) {
      QString g = QString::fromStdString(d.graph);
      rows.push_back({g, d.first, d.second, fused->nodeLabel(g, "l" + std::to_string(d.first)), fused->nodeLabel(g, "l" + std::to_string(d.second)),
                      QString::fromStdString(d.kind), d.fused, d.score, QString::fromStdString(d.reason)});
    }
    decisions_->setDecisions(rows, config.schedule.fusion ? "The scheduler recorded no fusion decisions for this model."
                                                          : "No fusion decisions: fusion is off, so the scheduler pairs nothing and every "
                                                            "loop-IR node is a kernel of its own.");
  }
  if (r.stage == "schedule" || !r.kernels.empty()) kernelRecord_ = r.kernels;
  if (!r.memory.empty()) profile_->setMemoryPlan(r.memory);
  if (r.stage == "partition") partitions_->setPartitions(r.partitionVerdict, r.partitioners, partitioner_->currentText());
  if (r.peakBytes) peakBytes_ = r.peakBytes;
  for (const CodeTab& t : r.code) code_->setCode(t.title, t.language, t.text, t.kernels);
  if (r.last) runningAll_ = false;
  busy_ = runningAll_;
  statusBar()->showMessage(QString("%1 done in %2 ms, drawn %3 ms later").arg(r.stage).arg(r.ms, 0, 'f', 2).arg(displayMs_[r.stage], 0, 'f', 0));
  if (r.last) refreshCandidates();
  if (r.last && !viewingStored_)
    readyLine_->setText(QString("Model %1: every stage done. Click a node to follow it through the panes and the code; "
                                "search a pane by op, name or module scope; Run & profile runs the code")
                            .arg(model_->currentText()));
  if (r.last && viewingStored_) {  // its recorded profile too, if it was run
    statusBar()->showMessage(QString("stored session %1: %2 stages shown as recorded").arg(session_).arg(done_.size()));
    showListings();
    lastSample_ = 0;
    pollProfile();
  }
  refreshPipelineBar();
}

void MainWindow::onFailed(const QString& stage, const QString& message) {
  // A model file that does not load leaves the list it was added to (built-in models stay).
  if (stage == "load") {
    QString m = model_->currentText();
    bool builtin = findBuiltinModel(m.toStdString()) != nullptr;
    if (!builtin && model_->count() > 1) {
      model_->blockSignals(true);
      model_->removeItem(model_->currentIndex());
      model_->setCurrentText(demoModelName());
      model_->blockSignals(false);
      failedModel_ = m;
    }
  }
  busy_ = runningAll_ = false;
  viewingStored_ = false;
  started_ = false;  // the next Step starts over (after the model or config is fixed)
  failedStage_ = stage;
  refreshPipelineBar();
  showError("The " + stage + " stage failed", message + "\n\nEvery stage finished before it is kept in the session.");
}

void MainWindow::showError(const QString& title, const QString& message) {
  lastError_ = title + ": " + message;
  statusBar()->showMessage(lastError_);
  if (dialogs_) QMessageBox::critical(this, title, message);
}

QString MainWindow::nextStageName() const {
  for (const StageDescriptor& s : stageTable())
    if (!done_.contains(s.name)) return s.name;
  return "last";
}

void MainWindow::refreshPipelineBar() {
  PipelineConfig config = currentRequest().config;
  for (size_t i = 0; i < stageLabels_.size(); ++i) {
    const StageDescriptor& stage = stageTable()[i];
    bool done = done_.contains(stage.name);
    bool skipped = done && !stage.applies(config);
    bool failed = !done && failedStage_ == stage.name;
    stageLabels_[i]->setStyleSheet(QString("QLabel { border-radius: 4px; padding: 3px; background: %1; color: %2; }")
                                       .arg(failed ? "#c62828" : skipped ? "#e6e6e6" : done ? "#2e7d32" : "#f1f1f1",
                                            (done && !skipped) || failed ? "white" : "#555"));
    stageLabels_[i]->setToolTip(failed ? "failed: " + lastError_ : skipped ? "skipped (inference)" : done ? "done" : "not run yet");
  }
  bool all = done_.size() >= static_cast<int>(stageTable().size());
  if (busy_) {
    progress_->setRange(0, static_cast<int>(stageTable().size()));
    progress_->setValue(static_cast<int>(done_.size()));
    progress_->setFormat("%v of %m stages");
  } else if (running()) {
    progress_->setRange(0, profileIterations_);
    progress_->setValue(profileDone_);
    progress_->setFormat("%v of %m iterations");
  }
  progress_->setVisible(busy_ || running());
  // A stored session can be compiled again (a new live session); it is not run in place: its
  // session id belongs to another file than the one runs record into.
  stepButton_->setEnabled(!busy_ && (!all || viewingStored_));
  runAllButton_->setEnabled(!busy_ && (!all || viewingStored_));
  runButton_->setEnabled(!busy_ && all && !running() && !viewingStored_);
}

int MainWindow::lightOrigins(const std::set<int64_t>& traced, QString* countsPerPane) {
  QStringList counts;
  for (GraphPane* p : panes_) counts << QString::number(p->highlightOrigins(traced));
  if (countsPerPane) *countsPerPane = counts.join(" / ");
  return code_->highlightOrigins(traced);
}

void MainWindow::selectNode(int pane, const QString& node) {
  std::vector<int64_t> o = panes_.at(pane)->view()->originsOf(node.toStdString());
  std::set<int64_t> traced(o.begin(), o.end());
  QString counts;
  int lines = lightOrigins(traced, &counts);
  QString label = panes_.at(pane)->view()->labelOf(node.toStdString()).section('\n', 0, 0);
  statusBar()->showMessage(QString("%1: %2 traced origin(s); related items per pane %3; %4 code line(s)")
                               .arg(label.isEmpty() ? node : label)
                               .arg(traced.size())
                               .arg(counts)
                               .arg(lines));
  QStringList lines2 = panes_.at(pane)->describe(node.toStdString());
  QString html;
  for (const QString& l : lines2) html += "<div>" + l.toHtmlEscaped() + "</div>";
  QStringList ids;
  for (int64_t id : traced)
    if (ids.size() < 24) ids << QString::number(id);
  html += QString("<div><b>traced nodes it comes from (%1):</b> %2%3</div>")
              .arg(traced.size())
              .arg(ids.isEmpty() ? QString("none") : "n" + ids.join(", n"), traced.size() > 24 ? ", …" : "");
  QStringList kernels = code_->kernelsComputing(traced);
  html += "<div><b>kernels:</b> " + (kernels.isEmpty() ? QString("none yet (codegen not run)") : kernels.join(", ").toHtmlEscaped()) + "</div>";
  QStringList related;
  for (GraphPane* p : panes_) related << QString("%1: %2").arg(p->title()).arg(p->view()->highlightedCount());
  html += "<div><b>related items:</b> " + related.join(", ").toHtmlEscaped() + "</div>";
  properties_->setHtml(html);
}

bool MainWindow::openScope(const std::string& scope) {
  bool any = false;
  for (GraphPane* p : panes_) any = p->openScope(scope) || any;
  return any;
}

void MainWindow::selectKernel(const QString& graph, const QString& kernel) {
  panes_.back()->showGraphNamed(graph);  // the fused pane shows the kernel's graph
  std::vector<int64_t> o = code_->originsOfKernel(graph, kernel);
  std::set<int64_t> traced(o.begin(), o.end());
  QString counts;
  int lines = lightOrigins(traced, &counts);
  statusBar()->showMessage(QString("%1 %2: computes %3 traced node(s); related items per pane %4; %5 code line(s)")
                               .arg(graph, kernel)
                               .arg(traced.size())
                               .arg(counts)
                               .arg(lines));
  properties_->setHtml(kernelHtml(graph, kernel));
}

// A kernel's ordered op list for the Properties dock, recomputed ops marked.
QString MainWindow::kernelHtml(const QString& graph, const QString& kernel) const {
  QString html = QString("<div><b>%1</b> of the %2 graph</div>").arg(kernel.toHtmlEscaped(), graph.toHtmlEscaped());
  for (const StoredKernel& k : kernelRecord_) {
    if (QString::fromStdString(k.graph) != graph || QString::fromStdString(k.name) != kernel) continue;
    size_t recomputed = recomputedCount(k.ops);
    html += QString("<div>%1 loop-IR node(s), %2 op(s) in order%3:</div><ol>")
                .arg(k.nodes.size())
                .arg(k.ops.size())
                .arg(recomputed ? QString(", <span style='color:#b24a00'>%1 recomputed from the forward</span>").arg(recomputed) : QString());
    for (const StoredKernelOp& o : k.ops) {
      QString op = QString::fromStdString(primBaseName(o.op)).toHtmlEscaped();
      html += QString("<li>%1 <span style='color:#888'>l%2</span></li>")
                  .arg(o.recomputed ? "<span style='color:#b24a00'><b>" + op + "</b> (recomputed)</span>" : op)
                  .arg(o.node);
    }
    return html + "</ol>";
  }
  return html + "<div>no op list recorded for it</div>";
}

QString MainWindow::whyNotFused(const QString& graph, const QString& a, const QString& b) const {
  auto id = [](const QString& n) { return n.startsWith('l') ? n.mid(1).toInt() : -1; };
  int ia = id(a), ib = id(b);
  GraphPane* fused = panes_.back();
  QString la = fused->nodeLabel(graph, a.toStdString()), lb = fused->nodeLabel(graph, b.toStdString());
  QString what = QString("%1 (%2) and %3 (%4)").arg(a, la, b, lb);
  if (ia < 0 || ib < 0 || la.isEmpty() || lb.isEmpty()) return what + ": not two loop-IR nodes of the " + graph + " graph";
  QString ka = fused->nodeKernel(graph, a.toStdString()), kb = fused->nodeKernel(graph, b.toStdString());
  if (!ka.isEmpty() && ka == kb) return what + ": fused, both in " + ka;
  for (const StoredDecision& d : decisionRecord_)
    if (QString::fromStdString(d.graph) == graph && ((d.first == ia && d.second == ib) || (d.first == ib && d.second == ia)))
      return what + QString(": considered as a %1 pair and %2: %3")
                        .arg(QString::fromStdString(d.kind), d.fused ? "fused" : "not fused", QString::fromStdString(d.reason)) +
             (d.fused ? QString(" (then split again: they ended in %1 and %2)").arg(ka, kb) : QString());
  return what + QString(": never considered. The scheduler only pairs a producer with its consumer (vertical) and two readers "
                        "of one buffer (horizontal); these are neither. They run in %1 and %2.")
                    .arg(ka.isEmpty() ? "no kernel" : ka, kb.isEmpty() ? "no kernel" : kb);
}

void MainWindow::selectDecision(const QString& graph, int first, int second) {
  GraphPane* fused = panes_.back();
  std::vector<std::string> nodes = {"l" + std::to_string(first), "l" + std::to_string(second)};
  std::set<int64_t> traced;
  for (const std::string& n : nodes)
    for (int64_t o : fused->nodeOrigins(graph, n)) traced.insert(o);
  fused->showGraphNamed(graph);
  lightOrigins(traced);
  fused->revealAll(nodes);
  properties_->setPlainText("Fusion decision\n\n" + whyNotFused(graph, QString::fromStdString(nodes[0]), QString::fromStdString(nodes[1])));
  statusBar()->showMessage(QString("%1: l%2 (%3) and l%4 (%5); %6 traced origin(s) lit in every pane")
                               .arg(graph)
                               .arg(first)
                               .arg(fused->nodeLabel(graph, nodes[0]))
                               .arg(second)
                               .arg(fused->nodeLabel(graph, nodes[1]))
                               .arg(traced.size()));
}

void MainWindow::showHelpBanner(bool on) {
  hintBox_->setVisible(on);
  QSettings().setValue("hideHelpBanner", !on);
}

bool MainWindow::event(QEvent* e) {
  // An action without a status tip would blank the status line as the mouse passes over a menu.
  if (e->type() == QEvent::StatusTip && static_cast<QStatusTipEvent*>(e)->tip().isEmpty()) return true;
  return QMainWindow::event(e);
}

QString MainWindow::propertiesText() const { return properties_->toPlainText(); }

void MainWindow::focusPane(int pane) {
  focused_ = pane;
  for (int i = 0; i < static_cast<int>(panes_.size()); ++i) {
    panes_[i]->setVisible(pane < 0 || i == pane);
    panes_[i]->focusButton()->setChecked(i == pane);
  }
  // Each pane keeps what it was looking at: the scene point at its centre stays there.
  for (GraphPane* p : panes_) {
    GraphView* v = p->view();
    QPointF centre = v->mapToScene(v->viewport()->rect().center());
    QTimer::singleShot(0, v, [v, centre] { v->centerOn(centre); });
  }
}

void MainWindow::startProfileRun(int iterations) {
  if (running() || !session_) return;
  CompileRequest r = currentRequest();
  QStringList args{"run", QString::fromStdString(r.model), "--target", QString::fromStdString(r.config.target), "--iters",
                   QString::number(iterations), "--session", sessionPath_, "--session-id", QString::number(session_),
                   "--partitioner", partitioner_->currentText()};
  if (r.config.train) args << "--train";
  if (!r.config.schedule.fusion) args << "--no-fusion";
  lastSample_ = 0;
  profileIterations_ = iterations;
  profileDone_ = 0;
  profile_->clear("Running " + QString::number(iterations) + " iterations in a separate process…");
  tabs_->setCurrentIndex(tabs_->indexOf(profile_->parentWidget()->parentWidget()));  // the scroll area's viewport, then it
  runner_.start(runnerProgram_.isEmpty() ? QApplication::applicationFilePath() : runnerProgram_, args);
  poll_->start();
  refreshPipelineBar();
}

void MainWindow::pollProfile() {
  if (!reader_ || !session_) return;
  try {
    int64_t last = lastSample_;
    if (reader_->profile(session_, lastSample_, &last).empty()) return;
    lastSample_ = last;
    std::vector<double> totals = iterationTotals(*reader_, session_);
    profileDone_ = static_cast<int>(totals.size());
    profile_->setProfile(latestRunTimings(*reader_, session_), totals, peakBytes_, running() ? "Running (live)" : "Finished");
    refreshPipelineBar();
  } catch (const std::exception& e) {
    statusBar()->showMessage(QString("reading the profile: ") + e.what());
  }
}

void MainWindow::onRunFinished(int code, QProcess::ExitStatus status) {
  poll_->stop();
  lastSample_ = 0;
  pollProfile();
  refreshPipelineBar();
  QString out = QString::fromLocal8Bit(runner_.readAllStandardOutput()), err = QString::fromLocal8Bit(runner_.readAllStandardError());
  if (status != QProcess::NormalExit || code != 0) {
    QString why = status != QProcess::NormalExit ? "the run process crashed (a faulting kernel cannot take this window down)"
                                                 : QString("the run exited with status %1").arg(code);
    if (profile_->barCount() == 0) profile_->clear("The run failed: " + why + ". Its output is in the error message; nothing was profiled.");
    showError("Run failed", why + "\n\n" + (err + out).right(3000));
    return;
  }
  if (!showListings()) return;
  statusBar()->showMessage("run finished: " + out.section('\n', -3).trimmed().left(300));
}

// The compiled listings the session holds (a run writes them), each linked line by line to its
// source tab.
bool MainWindow::showListings() {
  try {
    if (reader_)
      for (const CodeViewData& l : listingViews(reader_->sources(session_), reader_->kernelSpans(session_)))
        code_->setListing(QString::fromStdString(l.title), QString::fromStdString(l.language), QString::fromStdString(l.sourceTitle),
                          QString::fromStdString(l.text), l.sourceLines);
    return true;
  } catch (const std::exception& e) {
    showError("Cannot read the compiled code from the session", e.what());
    return false;
  }
}

void MainWindow::refreshCandidates() {
  if (!reader_) return;
  std::vector<std::pair<int64_t, QString>> list;
  try {
    const std::string model = reader_->session(session_).model;
    for (const SessionInfo& s : reader_->sessions())
      if (s.id != session_ && s.model == model) list.push_back({s.id, QString("%1: %2 %3").arg(s.id).arg(QString::fromStdString(s.model), QString::fromStdString(s.config))});
  } catch (const std::exception& e) {
    return showError("Cannot list the sessions to compare with", e.what());
  }
  std::reverse(list.begin(), list.end());  // newest first
  compare_->setCandidates(list);
}

void MainWindow::compareWith(int64_t other) {
  if (!reader_ || !session_) return;
  try {
    compare_->setComparison(compareSessions(*reader_, session_, *reader_, other));
    comparedWith_ = other;
    tabs_->setCurrentWidget(compare_);
  } catch (const std::exception& e) {
    showError("Compare failed", e.what());
  }
}

void MainWindow::exportComparison(const QString& path) {
  if (!reader_ || !session_ || !comparedWith_) return showError("Nothing to export", "Compare this session with another first.");
  try {
    if (path.endsWith(".pdf", Qt::CaseInsensitive)) {
      writePdfComparison(*reader_, session_, *reader_, comparedWith_, path);
    } else {
      std::ofstream f(path.toStdString(), std::ios::binary);
      if (!(f << htmlComparisonReport(*reader_, session_, *reader_, comparedWith_))) throw Error("cannot write " + path.toStdString());
    }
    statusBar()->showMessage("wrote " + path);
  } catch (const std::exception& e) {
    showError("Export failed", e.what());
  }
}

void MainWindow::exportReport(const QString& path) {
  if (!reader_ || !session_) return showError("Nothing to export", "Run at least one stage first.");
  try {
    if (path.endsWith(".pdf", Qt::CaseInsensitive)) {
      writePdfReport(*reader_, session_, path);
    } else {
      std::ofstream f(path.toStdString(), std::ios::binary);
      if (!(f << htmlReport(*reader_, session_))) throw Error("cannot write " + path.toStdString());
    }
    statusBar()->showMessage("wrote " + path);
  } catch (const std::exception& e) {
    showError("Export failed", e.what());
  }
}

}  // namespace fusebox

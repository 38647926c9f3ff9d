// The inspector window: model and config on the toolbar, a pipeline bar showing which stages are
// done (Step / Run all / Reset), four linked graph panes (traced, joint, prims, fused loop IR),
// and tabs for code, live profile, schedule text and fusion comparison. The pipeline runs on a
// worker thread; generated code runs in a child `fusebox run` process that appends its profile
// to the session, which this window reads as it arrives.
#pragma once

#include <QMainWindow>
#include <QMap>
#include <QProcess>
#include <QThread>
#include <memory>
#include <set>
#include <vector>

#include "app/gui/pipeline_worker.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QSplitter;
class QProgressBar;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTextBrowser;
class QTimer;

namespace fusebox {

class CodeView;
class CompareView;
class DecisionView;
class PartitionView;
class GraphPane;
class ProfileView;
class SessionBrowser;
class SessionStore;

class MainWindow : public QMainWindow {
  Q_OBJECT
public:
  explicit MainWindow(const QString& sessionPath, QWidget* parent = nullptr);
  ~MainWindow() override;

  // What the buttons do (also driven by tests).
  void reset();
  // A toolbar change: with every stage of a live session run, only the stages the change affects
  // run again (fusion: from schedule; partitioner: from partition; target: the code), as a new
  // session; otherwise (a new model, train/inference, nothing run yet) the window starts over.
  void configChanged();
  QString lastRerunFrom() const { return rerunFrom_; }
  void stepStage();
  void runAllStages();
  void startProfileRun(int iterations);
  void compareWith(int64_t otherSession);
  void exportReport(const QString& path);  // .html or .pdf
  void exportComparison(const QString& path);  // the comparison on screen, .html or .pdf
  // A click on item `node` of pane `pane`: lights what it came from and produced in every pane and
  // the code, scrolls them there, and shows its properties.
  void selectNode(int pane, const QString& node);
  // Gives pane `pane` the whole width (-1: all panes side by side again).
  void focusPane(int pane);
  // Kernel `kernel` of graph `graph` picked (in the profile): its nodes lit in every pane and its code.
  void selectKernel(const QString& graph, const QString& kernel);
  // A fusion decision picked: both loop-IR nodes shown in the fused pane, their origins everywhere.
  void selectDecision(const QString& graph, int first, int second);
  DecisionView* decisionView() const { return decisions_; }
  PartitionView* partitionView() const { return partitions_; }
  // Why loop-IR nodes `a` and `b` ("l12") of graph `graph` are not in one kernel, answered from the
  // schedule's record: the same kernel, the decision taken on the pair with its reason, or why the
  // scheduler never considered the pair.
  QString whyNotFused(const QString& graph, const QString& a, const QString& b) const;
  // Opens `scope` (and the scopes around it) in every pane whose graph has it; false when none has.
  bool openScope(const std::string& scope);
  int focusedPane() const { return focused_; }
  QString propertiesText() const;
  void showHelpBanner(bool on);  // remembered (QSettings)
  bool helpBannerShown() const { return !hintBox_->isHidden(); }
  QComboBox* modelChoice() const { return model_; }
  QString failedModel() const { return failedModel_; }  // the last model file taken off the list
  void setModel(const QString& model);
  void setFusion(bool on);
  // Shows stored session `id` of the session file `path` (its latest when 0) from the file alone,
  // without recomputing; Step or Run all afterwards starts a new live session of its model.
  void openStoredSession(const QString& path, qint64 id = 0);
  bool viewingStored() const { return viewingStored_; }
  // The session browser on `path`: every session of the file, to open, rename, annotate, delete.
  void openSessionBrowser(const QString& path);
  SessionBrowser* sessionBrowser() const { return browser_; }
  QStringList recentSessionFiles() const;

  // State, for tests and the status bar.
  GraphPane* pane(int i) const { return panes_.at(i); }
  CodeView* codeView() const { return code_; }
  ProfileView* profileView() const { return profile_; }
  CompareView* compareView() const { return compare_; }
  QTabWidget* tabs() const { return tabs_; }
  int64_t session() const { return session_; }
  QStringList stagesDone() const { return done_; }
  // How long after stage `stage` finished its graphs were on screen (folding and layout on the
  // worker, then the panes on the UI thread), in ms.
  double displayMs(const QString& stage) const { return displayMs_.value(stage, -1); }
  bool busy() const { return busy_; }
  bool running() const { return runner_.state() != QProcess::NotRunning; }
  QString lastError() const { return lastError_; }
  int graphPaneHeight() const;  // the first graph pane's drawing area (tests: small screens)
  void setShowDialogs(bool on) { dialogs_ = on; }  // tests read lastError() instead of a modal dialog
  // The `fusebox` binary that runs generated code (default: this executable).
  void setRunner(const QString& program) { runnerProgram_ = program; }

signals:
  void requestStart(const fusebox::CompileRequest& r);
  void requestStep();
  void requestRunAll();
  void requestOpenStored(const QString& path, qlonglong session);
  void requestReconfigure(const fusebox::CompileRequest& r);

protected:
  bool event(QEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;
  void showEvent(QShowEvent* e) override;

private:
  void buildUi();
  void splitForHeight();
  void onStageDone(const StageResult& r);
  void onFailed(const QString& stage, const QString& message);
  void onStoredSessionOpened(qlonglong id, const QString& path, const QString& model, const QString& config,
                             const QString& target, int stages);
  void leaveStoredSession();
  void refreshBrowser();
  // Lights the items and code with these traced origins in every pane (scrolled to them); returns
  // the code lines lit, and the lit items per pane as "1 / 7 / 6 / 4".
  int lightOrigins(const std::set<int64_t>& traced, QString* countsPerPane = nullptr);
  void rememberSessionFile(const QString& path);
  void onRunFinished(int code, QProcess::ExitStatus status);
  void pollProfile();
  void refreshPipelineBar();
  QString nextStageName() const;
  void refreshCandidates();
  bool showListings();
  void showError(const QString& title, const QString& message);
  void ensureStarted();
  CompileRequest currentRequest() const;

  QString sessionPath_;
  QString runnerProgram_;
  QThread thread_;
  PipelineWorker* worker_ = nullptr;
  std::unique_ptr<SessionStore> reader_;  // the UI thread's own connection to the session file
  int64_t session_ = 0;
  bool started_ = false, busy_ = false, runningAll_ = false, dialogs_ = true;
  bool viewingStored_ = false;  // the panes show a stored session, not a live one
  QStringList done_;
  PipelineConfig liveConfig_;  // the config of the pipeline the worker holds
  QString rerunFrom_;
  QMap<QString, double> displayMs_;
  QString lastError_;
  QString failedStage_;
  int64_t peakBytes_ = 0;
  int64_t lastSample_ = 0;

  QComboBox* model_ = nullptr;
  QCheckBox* train_ = nullptr;
  QComboBox* target_ = nullptr;
  QComboBox* partitioner_ = nullptr;
  QCheckBox* fusion_ = nullptr;
  QSpinBox* iterations_ = nullptr;
  QPushButton* stepButton_ = nullptr;
  QPushButton* runAllButton_ = nullptr;
  QPushButton* runButton_ = nullptr;
  std::vector<QLabel*> stageLabels_;
  std::vector<GraphPane*> panes_;
  CodeView* code_ = nullptr;
  ProfileView* profile_ = nullptr;
  CompareView* compare_ = nullptr;
  QPlainTextEdit* scheduleText_ = nullptr;
  DecisionView* decisions_ = nullptr;
  PartitionView* partitions_ = nullptr;
  int64_t comparedWith_ = 0;  // the session the Compare tab shows against this one (0: none)
  std::vector<StoredDecision> decisionRecord_;
  std::vector<StoredKernel> kernelRecord_;
  QString kernelHtml(const QString& graph, const QString& kernel) const;  // the schedule's kernels with their ordered ops
  QTabWidget* tabs_ = nullptr;
  QSplitter* panesAndTabs_ = nullptr;
  bool splitterMoved_ = false;  // by the user: window resizes keep their split
  bool shownOnce_ = false;
  QLabel* hint_ = nullptr;
  QWidget* hintBox_ = nullptr;  // the help banner and its close button
  QString failedModel_;
  QTextBrowser* properties_ = nullptr;
  SessionBrowser* browser_ = nullptr;  // the selected item's properties (a dock on the right)
  int focused_ = -1;
  QProgressBar* progress_ = nullptr;  // in the status bar: stages while compiling, iterations while profiling
  QLabel* readyLine_ = nullptr;       // the status bar's resting line: model and what to press
  int profileIterations_ = 0, profileDone_ = 0;
  QProcess runner_;
  QTimer* poll_ = nullptr;
};

}  // namespace fusebox

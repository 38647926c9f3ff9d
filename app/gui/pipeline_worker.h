// Runs the compile pipeline on a worker thread for the GUI: one stage per step, each recorded in
// the session file, then read back and turned into what the views show (report/stage_view;
// Graphviz layouts, computed here, off the UI thread; code with its kernels' line spans). Errors
// come back as a signal naming the stage.
#pragma once

#include <QObject>
#include <QString>
#include <memory>
#include <vector>

#include "core/pipeline/pipeline.h"
#include "sessions/session_store.h"
#include "views/code_view.h"
#include "views/graph_pane.h"

namespace fusebox {

class SessionStore;

struct CompileRequest {
  std::string model;  // built-in name or .fbx path
  PipelineConfig config;  // with the target the run compiles for
  QString sessionPath;
};

struct CodeTab {
  QString title, language, text;
  std::vector<KernelSpan> kernels;
};

struct StageResult {
  QString stage;
  double ms = 0;
  int pane = -1;                 // which graph pane gets `graphs` (-1: none)
  std::vector<PaneGraph> graphs;
  std::vector<CodeTab> code;
  QString text;                  // a textual artifact (partition report, loop program)
  bool last = false;             // no stage left
  int64_t peakBytes = 0;         // schedule: the memory plan's peak
  double prepareMs = 0;          // reading the record back, folding and laying out its graphs
  std::vector<StoredDecision> decisions;  // schedule: the fusion decisions
  std::vector<StoredKernel> kernels;      // schedule: the kernels with their ordered ops
  std::vector<StoredSchedule> memory;     // schedule: the memory plan per kernel of each graph
  QString partitionVerdict;               // partition: both partitioners compared
  std::vector<std::pair<QString, QString>> partitioners;  // partition: each one's saved and recomputed
};

class PipelineWorker : public QObject {
  Q_OBJECT
public:
  PipelineWorker();
  ~PipelineWorker() override;

public slots:
  void start(const fusebox::CompileRequest& request);  // a new pipeline and session
  void step();
  void runAll();
  // A config change: the stages it does not affect are kept (recorded again into a new session of
  // the new config), the rest run again.
  void reconfigure(const fusebox::CompileRequest& request);
  // Shows stored session `session` of the file at `path` (the latest when 0) from its records
  // alone, stage by stage, without a pipeline; the file is only read.
  void openStored(const QString& path, qlonglong session);

signals:
  void sessionStarted(qlonglong session, const QString& path);
  // A stored session is being shown: what it was compiled from (its model, config and target).
  void storedSessionOpened(qlonglong session, const QString& path, const QString& model, const QString& config,
                           const QString& target, int stages);
  void stageDone(const fusebox::StageResult& result);
  void progress(const QString& what);
  void reconfigured(const QString& firstStage);  // the stages from this one on run again  // "running the joint stage…", "laying out the joint graphs…"
  void failed(const QString& stage, const QString& message);
  // After codegen, the backend compiled the modules: their listings are in the session ("" when
  // it could; else why not, e.g. no NVRTC here).
  void compiled(const QString& problem);

private:
  bool stepOnce();
  void compileListings();
  StageResult describe(Stage s);
  std::unique_ptr<Pipeline> pipeline_;
  std::unique_ptr<SessionStore> store_;
  int64_t session_ = 0;
  CompileRequest request_;
};

}  // namespace fusebox

Q_DECLARE_METATYPE(fusebox::CompileRequest)
Q_DECLARE_METATYPE(fusebox::StageResult)

#include "app/gui/pipeline_worker.h"

#include <chrono>

#include "core/frontend/model_loader.h"
#include "core/pipeline/stage_table.h"
#include "report/graph_fold.h"
#include "report/graph_layout.h"
#include "report/stage_view.h"
#include "sessions/session_recorder.h"
#include "sessions/session_store.h"

namespace fusebox {

namespace {

// Graphviz layout, or the one cached in the session file for the same dot text.
GraphLayout cachedLayout(SessionStore& store, const std::string& dot) {
  std::string key = dotHash(dot);
  if (std::optional<std::string> text = store.cachedLayout(key)) {
    try {
      return parseLayout(*text);
    } catch (const LayoutError&) {  // a damaged entry: lay out again and replace it
    }
  }
  GraphLayout l = layoutDot(dot);
  store.cacheLayout(key, serializeLayout(l));
  return l;
}

}  // namespace

PipelineWorker::PipelineWorker() = default;
PipelineWorker::~PipelineWorker() = default;

void PipelineWorker::start(const CompileRequest& r) {
  request_ = r;
  pipeline_.reset();
  try {
    pipeline_ = std::make_unique<Pipeline>(loadModel(r.model), r.config);
    store_ = std::make_unique<SessionStore>(SessionStore::open(r.sessionPath.toStdString()));
    session_ = store_->createSession(r.model, describeConfig(r.config), r.config.target);
    emit sessionStarted(session_, r.sessionPath);
  } catch (const std::exception& e) {
    pipeline_.reset();
    emit failed("load", e.what());
  }
}

void PipelineWorker::step() { stepOnce(); }

void PipelineWorker::openStored(const QString& path, qlonglong session) {
  pipeline_.reset();
  try {
    store_ = std::make_unique<SessionStore>(SessionStore::openReadOnly(path.toStdString()));
    std::optional<int64_t> id = session > 0 ? std::optional<int64_t>(session) : store_->latestSession();
    if (!id) throw SessionError(path.toStdString() + ": the file holds no session yet");
    const SessionInfo info = store_->session(*id);  // throws naming the file when absent
    session_ = *id;
    std::vector<Stage> stages;
    for (const std::string& name : store_->stagesDone(session_))
      if (std::optional<Stage> s = parseStage(name)) stages.push_back(*s);
    emit storedSessionOpened(session_, path, QString::fromStdString(info.model), QString::fromStdString(info.config),
                             QString::fromStdString(info.target), static_cast<int>(stages.size()));
    for (size_t i = 0; i < stages.size(); ++i) {
      emit progress(QString("laying out the stored %1 stage…").arg(QString::fromStdString(stageName(stages[i]))));
      StageResult r = describe(stages[i]);
      r.last = i + 1 == stages.size();
      emit stageDone(r);
    }
  } catch (const std::exception& e) {
    store_.reset();
    emit failed("open", e.what());
  }
}

void PipelineWorker::reconfigure(const CompileRequest& r) {
  if (!pipeline_) return emit failed("reconfigure", "no pipeline to change: press Step or Run all");
  try {
    std::vector<Stage> kept;
    std::optional<Stage> from = firstStageAffected(pipeline_->config(), r.config);
    for (const StageDescriptor& d : stageTable())
      if (pipeline_->done(d.stage) && (!from || static_cast<int>(d.stage) < static_cast<int>(*from))) kept.push_back(d.stage);
    from = pipeline_->reconfigure(r.config);
    request_ = r;
    session_ = store_->createSession(r.model, describeConfig(r.config), r.config.target);
    for (Stage s : kept)
      if (stageDescriptor(s).applies(r.config)) store_->writeStage(session_, stageRecord(*pipeline_, s));
    emit sessionStarted(session_, r.sessionPath);
    emit reconfigured(QString::fromStdString(from ? stageName(*from) : "codegen"));
  } catch (const std::exception& e) {
    pipeline_.reset();
    return emit failed("reconfigure", e.what());
  }
  runAll();
}

// The compilers' listings without a run (a CUDA target's PTX and SASS on a machine with NVRTC
// and no GPU too), off the UI thread; a compiler that fails or is absent is said, not fatal.
void PipelineWorker::compileListings() {
  emit progress("compiling the generated code for its listings…");
  try {
    recordBackendCompile(*store_, session_, *pipeline_);
    emit compiled("");
  } catch (const std::exception& e) {
    emit compiled(QString::fromStdString(e.what()).left(300));
  }
}

void PipelineWorker::runAll() {
  while (stepOnce()) {
  }
}

bool PipelineWorker::stepOnce() {
  if (!pipeline_) return false;
  std::optional<Stage> next = pipeline_->nextStage();
  if (!next) return false;
  try {
    emit progress(QString("running the %1 stage…").arg(QString::fromStdString(stageName(*next))));
    pipeline_->step();
    store_->writeStage(session_, stageRecord(*pipeline_, *next));
    emit progress(QString("%1 done; folding and laying out its graphs…").arg(QString::fromStdString(stageName(*next))));
    StageResult r = describe(*next);
    r.last = !pipeline_->nextStage();
    emit stageDone(r);
    if (*next == Stage::Codegen) compileListings();
    return !r.last;
  } catch (const std::exception& e) {
    emit failed(stageName(*next), e.what());
    pipeline_.reset();  // the finished stages stay in the session
    return false;
  }
}

// The stage as the session stored it: the view reads the record the pipeline wrote, so a
// stored session can be shown the same way without the pipeline.
StageResult PipelineWorker::describe(Stage s) {
  auto start = std::chrono::steady_clock::now();
  StageView v = stageView(s, store_->stageRecord(session_, stageName(s)));
  StageResult r;
  r.stage = QString::fromStdString(v.stage);
  r.ms = v.ms;
  r.pane = v.pane;
  for (const GraphViewData& g : v.graphs) {
    // Folded by module scope: the opening view of even a GPT-2-size graph is a few dozen boxes,
    // laid out here, off the UI thread, and cached in the session file.
    auto folding = std::make_shared<const ScopeFolding>(parseDot(g.dot), g.scopes, g.kernelClusters);
    std::set<std::string> expanded = folding->initialExpansion();
    GraphLayout layout = cachedLayout(*store_, folding->foldedDot(expanded));
    r.graphs.push_back({QString::fromStdString(g.name), folding, g.origins, expanded, std::move(layout)});
  }
  for (const CodeViewData& c : v.code) {
    CodeTab tab{QString::fromStdString(c.title), QString::fromStdString(c.language), QString::fromStdString(c.text), {}};
    for (const StoredKernelSpan& k : c.kernels) tab.kernels.push_back({QString::fromStdString(k.name), k.firstLine, k.lastLine, k.provenance});
    r.code.push_back(std::move(tab));
  }
  r.text = QString::fromStdString(v.text);
  r.peakBytes = v.peakBytes;
  r.decisions = v.decisions;
  r.kernels = v.kernels;
  r.memory = v.memory;
  r.partitionVerdict = QString::fromStdString(v.partitionVerdict);
  for (const auto& [title, text] : v.partitioners) r.partitioners.emplace_back(QString::fromStdString(title), QString::fromStdString(text));
  r.prepareMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace fusebox

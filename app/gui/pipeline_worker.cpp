#include "app/gui/pipeline_worker.h"

#include "core/backend/backend.h"
#include "core/frontend/model_loader.h"
#include "core/pipeline/stage_table.h"
#include "report/graph_layout.h"
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

// The dot text of `graph` in the stage's record (what the session stored).
std::string dotOf(const StageRecord& r, const std::string& graph) {
  for (const StageArtifact& a : r.artifacts)
    if (a.graph == graph && a.format == "dot") return a.body;
  throw Error("the stage record holds no dot text of the " + graph + " graph");
}

// A graph of stages 1-3 laid out, with each node's traced origins (a traced node is its own).
PaneGraph paneOf(SessionStore& store, const StageRecord& r, const std::string& name, const Graph& g, bool traced) {
  PaneGraph pg{QString::fromStdString(name), cachedLayout(store, dotOf(r, name)), {}};
  for (const Node& n : g.nodes()) {
    std::vector<int64_t> o(n.provenance.begin(), n.provenance.end());
    if (traced || o.empty()) o.push_back(n.id);
    pg.origins["n" + std::to_string(n.id)] = o;
  }
  return pg;
}

// A scheduled loop program laid out from the schedule stage's record (its dot has a cluster per kernel).
PaneGraph paneOf(SessionStore& store, const StageRecord& r, const std::string& name, const LoopProgram& lp) {
  PaneGraph pg{QString::fromStdString(name), cachedLayout(store, dotOf(r, name)), {}};
  for (const LoopNode& n : lp.nodes) pg.origins["l" + std::to_string(n.id)] = std::vector<int64_t>(n.provenance.begin(), n.provenance.end());
  return pg;
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

void PipelineWorker::runAll() {
  while (stepOnce()) {
  }
}

bool PipelineWorker::stepOnce() {
  if (!pipeline_) return false;
  std::optional<Stage> next = pipeline_->nextStage();
  if (!next) return false;
  try {
    pipeline_->step();
    StageRecord record = stageRecord(*pipeline_, *next);
    store_->writeStage(session_, record);
    StageResult r = describe(*next, record);
    r.last = !pipeline_->nextStage();
    emit stageDone(r);
    return !r.last;
  } catch (const std::exception& e) {
    emit failed(stageName(*next), e.what());
    pipeline_.reset();  // the finished stages stay in the session
    return false;
  }
}

StageResult PipelineWorker::describe(Stage s, const StageRecord& rec) {
  const Pipeline& p = *pipeline_;
  const StageDescriptor& d = stageDescriptor(s);
  StageResult r;
  r.stage = d.name;
  r.pane = d.pane;
  for (const StageTiming& t : p.timings())
    if (t.stage == s) r.ms = t.ms;
  switch (d.output) {
    case StageOutput::Graphs:
      for (const NamedGraph& g : p.stageGraphs(s)) r.graphs.push_back(paneOf(*store_, rec, g.name, *g.graph, s == Stage::Trace));
      break;
    case StageOutput::LoopPrograms:
      for (const StageArtifact& a : rec.artifacts) r.text += QString::fromStdString(a.body);  // the loop programs
      break;
    case StageOutput::Schedules:
      for (size_t i = 0; i < p.schedules().size(); ++i) {
        r.graphs.push_back(paneOf(*store_, rec, p.graphName(i), p.loops()[i]));
        r.peakBytes += p.schedules()[i].memory.peakIntermediateBytes;
        r.text += QString::fromStdString(p.loops()[i].name + ":\n" + p.schedules()[i].str());
      }
      break;
    case StageOutput::Code:
      for (size_t i = 0; i < p.modules().size(); ++i)
        for (const Backend* b : backends()) {  // every target's code, "C++ forward", "CUDA forward", ...
          const GeneratedModule& m = p.modules(b->name())[i];
          CodeTab tab{QString(b->title()) + " " + QString::fromStdString(p.graphName(i)), b->language(), QString::fromStdString(m.source), {}};
          for (const KernelLines& k : m.kernels)
            tab.kernels.push_back({QString::fromStdString(k.name), k.firstLine, k.lastLine, {k.provenance.begin(), k.provenance.end()}});
          r.code.push_back(std::move(tab));
        }
      break;
  }
  return r;
}

}  // namespace fusebox

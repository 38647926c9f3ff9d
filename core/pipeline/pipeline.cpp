#include "core/pipeline/pipeline.h"

#include <chrono>

#include "core/backend/backend.h"
#include "core/decompose/decompose.h"
#include "core/loopir/lower.h"
#include "core/pipeline/stage_table.h"

namespace fusebox {

Pipeline::Pipeline(ModelDef model, PipelineConfig config) : model_(std::move(model)), config_(std::move(config)) {
  findBackend(config_.target);  // an unknown target is an error now, not after the other stages
}

bool Pipeline::applies(Stage s) const { return stageDescriptor(s).applies(config_); }

bool Pipeline::done(Stage s) const {
  switch (s) {
    case Stage::Trace: return traced_.has_value();
    case Stage::Joint: return joint_.has_value() || (!config_.train && traced_);
    case Stage::Partition: return partition_.has_value() || (!config_.train && traced_);
    case Stage::Decompose: return decomposed_;
    case Stage::Lower: return lowered_;
    case Stage::Schedule: return scheduled_;
    case Stage::Codegen: return generated_;
  }
  return false;
}

std::optional<Stage> Pipeline::nextStage() const {
  for (int i = 0; i < kNumStages; ++i) {
    Stage s = static_cast<Stage>(i);
    if (applies(s) && !done(s)) return s;
  }
  return std::nullopt;
}

std::optional<Stage> firstStageAffected(const PipelineConfig& a, const PipelineConfig& b) {
  if (a.train != b.train || !(a.trace == b.trace) || !(a.joint == b.joint)) return Stage::Trace;
  if (a.partitioner != b.partitioner && a.train) return Stage::Partition;
  if (!(a.schedule == b.schedule)) return Stage::Schedule;
  if (a.target != b.target) return Stage::Codegen;
  return std::nullopt;
}

std::optional<Stage> Pipeline::reconfigure(const PipelineConfig& next) {
  findBackend(next.target);  // an unknown target: an error before anything is forgotten
  std::optional<Stage> from = firstStageAffected(config_, next);
  config_ = next;
  if (!from) return std::nullopt;
  auto forget = [&](Stage s) { return static_cast<int>(s) >= static_cast<int>(*from); };
  if (forget(Stage::Trace)) traced_.reset();
  if (forget(Stage::Joint)) joint_.reset();
  if (forget(Stage::Partition)) partition_.reset();
  if (forget(Stage::Decompose)) prims_.clear(), decomposed_ = false;
  if (forget(Stage::Lower)) loops_.clear(), lowered_ = false;
  if (forget(Stage::Schedule)) schedules_.clear(), scheduled_ = false;
  modules_.clear();  // every target's code follows from the schedules
  generated_ = false;
  std::erase_if(timings_, [&](const StageTiming& t) { return forget(t.stage); });
  return from;
}

bool Pipeline::step() {
  std::optional<Stage> s = nextStage();
  if (!s) return false;
  if (observer_) observer_(*s);
  auto t0 = std::chrono::steady_clock::now();
  switch (*s) {
    case Stage::Trace: traced_ = trace(model_, config_.trace); break;
    case Stage::Joint: joint_ = buildJointGraph(*traced_, config_.joint); break;
    case Stage::Partition: partition_ = partitionJointGraph(*joint_, config_.partitioner); break;
    case Stage::Decompose:
      if (config_.train) {
        prims_.push_back(decompose(partition_->forward));
        prims_.push_back(decompose(partition_->backward));
      } else {
        prims_.push_back(decompose(*traced_));
      }
      decomposed_ = true;
      break;
    case Stage::Lower:
      for (const Graph& g : prims_) loops_.push_back(lower(g));
      lowered_ = true;
      break;
    case Stage::Schedule:
      for (const LoopProgram& lp : loops_) {
        schedules_.push_back(schedule(lp, config_.schedule));
        schedules_.back().trainingGraph = config_.train;
      }
      scheduled_ = true;
      break;
    case Stage::Codegen:
      modules_[config_.target] = generate(backend());
      generated_ = true;
      break;
  }
  timings_.push_back({*s, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()});
  return true;
}

void Pipeline::runUntil(Stage last) {
  while (!done(last) && step()) {
  }
}

void Pipeline::runAll() {
  while (step()) {
  }
}

static void require(bool ok, const char* what) {
  if (!ok) throw Error(std::string("pipeline: the ") + what + " stage has not run");
}

const Graph& Pipeline::traced() const {
  require(traced_.has_value(), "trace");
  return *traced_;
}
const JointGraph& Pipeline::joint() const {
  require(joint_.has_value(), "joint (needs training mode)");
  return *joint_;
}
const Partition& Pipeline::partition() const {
  require(partition_.has_value(), "partition (needs training mode)");
  return *partition_;
}
const std::vector<Graph>& Pipeline::prims() const {
  require(decomposed_, "decompose");
  return prims_;
}
const std::vector<LoopProgram>& Pipeline::loops() const {
  require(lowered_, "lower");
  return loops_;
}
const std::vector<Schedule>& Pipeline::schedules() const {
  require(scheduled_, "schedule");
  return schedules_;
}
std::vector<GeneratedModule> Pipeline::generate(const Backend& b) const {
  std::vector<GeneratedModule> out;
  for (size_t i = 0; i < loops_.size(); ++i)
    out.push_back(b.generate(loops_[i], schedules_[i], [this](NodeId id) { return describeTracedNode(id); }));
  return out;
}

const std::vector<GeneratedModule>& Pipeline::modules(const std::string& target) const {
  require(generated_, "codegen");
  const Backend& b = findBackend(target.empty() ? config_.target : target);
  auto it = modules_.find(b.name());
  if (it == modules_.end()) it = modules_.emplace(b.name(), generate(b)).first;
  return it->second;
}

const Backend& Pipeline::backend() const { return findBackend(config_.target); }

std::vector<NamedGraph> Pipeline::stageGraphs(Stage s) const {
  std::vector<const Graph*> graphs;
  switch (s) {
    case Stage::Trace: graphs = {&traced()}; break;
    case Stage::Joint: graphs = {&joint().graph}; break;
    case Stage::Partition: graphs = {&partition().forward, &partition().backward}; break;
    case Stage::Decompose:
      for (const Graph& g : prims()) graphs.push_back(&g);
      break;
    default: throw Error(std::string("pipeline: the ") + stageName(s) + " stage produces no IR graphs");
  }
  std::vector<std::string> names = stageDescriptor(s).graphs(config_);
  if (names.size() != graphs.size()) throw Error(std::string("pipeline: the stage table names the wrong number of ") + stageName(s) + " graphs");
  std::vector<NamedGraph> out;
  for (size_t i = 0; i < graphs.size(); ++i) out.push_back({names[i], graphs[i]});
  return out;
}

std::string Pipeline::graphName(size_t i) const { return primGraphNames(config_).at(i); }

std::string Pipeline::describeTracedNode(NodeId id) const {
  if (!traced_ || !traced_->hasNode(id)) return "n" + std::to_string(id);
  const Node& n = traced_->node(id);
  return n.op + (n.loc.valid() ? " @" + n.loc.str() : "");
}

}  // namespace fusebox

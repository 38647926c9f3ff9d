// The compile pipeline as a sequence of stages that can be run one at a time (step), up to a
// stage, or all at once. It owns every stage's artifact and how long each stage took.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/autograd/joint_graph.h"
#include "core/autograd/partition.h"
#include "core/codegen/generated_module.h"
#include "core/frontend/model.h"
#include "core/loopir/loop_ir.h"
#include "core/schedule/schedule.h"
#include "core/trace/trace.h"

namespace fusebox {

class Backend;

// The key of the stage table (core/pipeline/stage_table.h), which says what each stage is.
enum class Stage { Trace, Joint, Partition, Decompose, Lower, Schedule, Codegen };
constexpr int kNumStages = 7;
const char* stageName(Stage s);                            // the table's name: "trace", ...
std::optional<Stage> parseStage(const std::string& name);  // nullopt for a name not in the table

struct PipelineConfig {
  std::string target = "cpu";  // the backend (core/backend) that compiles and runs the generated code
  TraceOptions trace;
  bool train = false;  // inference skips the joint and partition stages
  JointOptions joint;
  Partitioner partitioner = Partitioner::MinCut;
  ScheduleConfig schedule;
  bool operator==(const PipelineConfig&) const = default;
};

// The first stage whose result differs between two configs (nullopt: none): the fusion options
// change the schedule on, the partitioner the partition on, the target only the code; train or
// the trace and joint options everything.
std::optional<Stage> firstStageAffected(const PipelineConfig& before, const PipelineConfig& after);

// A graph a stage produced, under the name the stage table gives it ("traced", "forward", ...).
struct NamedGraph {
  std::string name;
  const Graph* graph;
};

struct StageTiming {
  Stage stage;
  double ms = 0;
};

class Pipeline {
public:
  Pipeline(ModelDef model, PipelineConfig config);

  // Runs the next stage; returns false when every stage has run. Throws the stage's Error.
  bool step();
  // Takes `next` as the config and forgets the stages it affects (firstStageAffected), keeping
  // the ones before; returns the first stage that will run again (nullopt: nothing changed).
  std::optional<Stage> reconfigure(const PipelineConfig& next);
  void runUntil(Stage last);
  void runAll();
  bool done(Stage s) const;
  std::optional<Stage> nextStage() const;

  const ModelDef& model() const { return model_; }
  const PipelineConfig& config() const { return config_; }
  const Graph& traced() const;
  const JointGraph& joint() const;
  const Partition& partition() const;
  // The decomposed graphs: one (inference) or forward and backward (training).
  const std::vector<Graph>& prims() const;
  // One loop program and one schedule per prim graph.
  const std::vector<LoopProgram>& loops() const;
  const std::vector<Schedule>& schedules() const;
  // The generated modules of `target` (a backend's name; the configured target's when empty), one
  // per prim graph. The codegen stage generates the configured target's; another target's (the
  // code views and sessions show every target) are generated from the same schedules when first
  // asked for, and kept. Like step(), not thread-safe.
  const std::vector<GeneratedModule>& modules(const std::string& target = {}) const;
  // The configured target's backend (core/backend), which compiles and runs modules().
  const Backend& backend() const;
  // The IR graphs a finished stage of StageOutput::Graphs produced, named as the stage table says.
  std::vector<NamedGraph> stageGraphs(Stage s) const;
  // The name of prim graph / loop program / schedule i: "inference", or "forward" and "backward".
  std::string graphName(size_t i) const;
  // "linear @mlp.fbx:6:14": how generated code names a traced node.
  std::string describeTracedNode(NodeId id) const;
  const std::vector<StageTiming>& timings() const { return timings_; }
  // Called with each stage just before it runs (progress displays); however the stages are driven.
  void setStageObserver(std::function<void(Stage)> observer) { observer_ = std::move(observer); }

private:
  bool applies(Stage s) const;
  std::vector<GeneratedModule> generate(const Backend& b) const;

  ModelDef model_;
  PipelineConfig config_;
  std::optional<Graph> traced_;
  std::optional<JointGraph> joint_;
  std::optional<Partition> partition_;
  std::vector<Graph> prims_;
  bool decomposed_ = false;
  std::vector<LoopProgram> loops_;
  bool lowered_ = false;
  std::vector<Schedule> schedules_;
  bool scheduled_ = false;
  mutable std::map<std::string, std::vector<GeneratedModule>> modules_;  // by target
  bool generated_ = false;
  std::vector<StageTiming> timings_;
  std::function<void(Stage)> observer_;
};

}  // namespace fusebox

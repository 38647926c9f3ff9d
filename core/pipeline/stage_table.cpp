#include "core/pipeline/stage_table.h"

namespace fusebox {

namespace {

std::vector<std::string> tracedGraph(const PipelineConfig&) { return {"traced"}; }
std::vector<std::string> jointGraph(const PipelineConfig&) { return {"joint"}; }
std::vector<std::string> partitionGraphs(const PipelineConfig&) { return {"forward", "backward"}; }

enum Pane { kTracedPane, kAutogradPane, kPrimsPane, kLoopPane, kNoPane = -1 };

}  // namespace

const std::vector<GraphPaneInfo>& graphPanes() {
  static const std::vector<GraphPaneInfo> panes = {
      {"Traced", "Step to trace the model"},
      {"Joint (AOTAutograd)", "Step to build the joint graph\n(training only)"},
      {"Prims (PrimTorch)", "Step to decompose into prims"},
      {"Fused loop IR (Inductor)", "Step to lower and schedule;\nboxes are fused kernels"},
  };
  return panes;
}

std::vector<std::string> primGraphNames(const PipelineConfig& config) {
  if (!config.train) return {"inference"};
  return {"forward", "backward"};
}

const std::vector<StageDescriptor>& stageTable() {
  using O = StageOutput;
  static const std::vector<StageDescriptor> table = {
      // stage            name         training  output           pane           dumpByGraph  graphs
      {Stage::Trace,     "trace",     false,    O::Graphs,       kTracedPane,   false,       tracedGraph},
      {Stage::Joint,     "joint",     true,     O::Graphs,       kAutogradPane, false,       jointGraph},
      {Stage::Partition, "partition", true,     O::Graphs,       kAutogradPane, true,        partitionGraphs},
      {Stage::Decompose, "decompose", false,    O::Graphs,       kPrimsPane,    false,       primGraphNames},
      {Stage::Lower,     "lower",     false,    O::LoopPrograms, kNoPane,       false,       primGraphNames},
      {Stage::Schedule,  "schedule",  false,    O::Schedules,    kLoopPane,     false,       primGraphNames},
      {Stage::Codegen,   "codegen",   false,    O::Code,         kNoPane,       false,       primGraphNames},
  };
  return table;
}

const StageDescriptor& stageDescriptor(Stage s) {
  const auto& table = stageTable();
  size_t i = static_cast<size_t>(s);
  if (i >= table.size() || table[i].stage != s) throw Error("pipeline: stage " + std::to_string(i) + " is not in the stage table");
  return table[i];
}

const char* stageName(Stage s) { return stageDescriptor(s).name; }

std::optional<Stage> parseStage(const std::string& name) {
  for (const StageDescriptor& d : stageTable())
    if (name == d.name) return d.stage;
  return std::nullopt;
}

}  // namespace fusebox

// The pipeline's stages as one table, keyed by `Stage`: each stage's name, when it applies, what
// it produces (the graphs and their names) and where the inspector shows them. The pipeline, the
// CLI (`--until`, `dump --stage`), the GUI (pipeline bar, graph panes) and the session recorder
// all read it, so a stage is added in one place.
#pragma once

#include <string>
#include <vector>

#include "core/pipeline/pipeline.h"

namespace fusebox {

// What a stage's artifact is, which decides how it is recorded, printed and shown.
enum class StageOutput {
  Graphs,        // IR graphs (trace, joint, partition, decompose)
  LoopPrograms,  // loop IR, shown as text
  Schedules,     // fused kernels over the loop IR, with fusion decisions
  Code,          // generated sources, one module per prim graph
};

// The inspector's graph panes, left to right; a stage's graphs are shown in one of them.
struct GraphPaneInfo {
  const char* title;      // "Joint (AOTAutograd)"
  const char* emptyHint;  // shown before any stage has filled it
};
const std::vector<GraphPaneInfo>& graphPanes();

struct StageDescriptor {
  Stage stage;
  const char* name;   // "trace": --until, dump --stage, the stage column of sessions, the pipeline bar
  bool trainingOnly;  // inference skips it
  StageOutput output;
  int pane;           // index into graphPanes() for its graphs; -1 when it has none to draw
  // `dump --stage` names this stage's graphs one by one ("forward", "backward"), not the stage.
  bool dumpByGraph;
  // The names of the graphs (or loop programs, schedules, modules) it produces under `config`.
  std::vector<std::string> (*graphs)(const PipelineConfig& config);

  bool applies(const PipelineConfig& config) const { return !trainingOnly || config.train; }
};

// Every stage, in pipeline order (stageTable()[i].stage == Stage(i)).
const std::vector<StageDescriptor>& stageTable();
const StageDescriptor& stageDescriptor(Stage s);

// The names of the graphs from decomposition on, one per prim graph: "inference", or "forward"
// and "backward".
std::vector<std::string> primGraphNames(const PipelineConfig& config);

}  // namespace fusebox

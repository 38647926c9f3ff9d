// What the inspector shows for one finished stage, built from the stage's stored record alone
// (no pipeline): the graphs for its pane with each node's traced origins, the generated code with
// each kernel's lines, the text of the loop programs or schedules. The GUI shows a stage the same
// way whether the pipeline just ran it or it was read back from a session file. No Qt: the GUI
// lays the graphs out and turns this into widgets.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/pipeline/pipeline.h"
#include "sessions/session_store.h"

namespace fusebox {

struct GraphViewData {
  std::string name;  // "traced", "forward", ...
  std::string dot;   // its stored dot text
  std::map<std::string, std::vector<int64_t>> origins;  // dot node name -> traced node ids
  std::map<std::string, std::string> scopes;            // dot node name -> module scope (folding)
  bool kernelClusters = false;  // the dot's clusters are kernels (the schedule), not scopes
  bool operator==(const GraphViewData&) const = default;
};

struct CodeViewData {
  std::string title;     // "C++ forward"
  std::string language;  // the source kind: "cpp", "cuda"; or the listing's: "llvm_ir", "asm", "ptx", "sass"
  std::string text;
  std::vector<StoredKernelSpan> kernels;
  // A compiled listing's: the source tab it links to ("C++ forward") and, per line of `text`,
  // the source line it was compiled from (0: none)
  std::string sourceTitle;
  std::vector<int> sourceLines;
  bool operator==(const CodeViewData&) const = default;
};

struct StageView {
  std::string stage;
  double ms = 0;
  int pane = -1;  // the graph pane (stage table) that shows `graphs`; -1: none
  std::vector<GraphViewData> graphs;
  std::vector<CodeViewData> code;
  std::string text;       // loop programs, or the schedules with their decisions
  int64_t peakBytes = 0;  // schedule: the memory plans' peak, summed over the graphs
  std::vector<StoredDecision> decisions;  // schedule: every fusion decision with its reason and score
  std::vector<StoredKernel> kernels;      // schedule: every kernel with its ordered ops
  std::vector<StoredSchedule> memory;     // schedule: each graph's memory plan per kernel
  std::string partitionVerdict;           // partition: the two partitioners compared in one line
  std::vector<std::pair<std::string, std::string>> partitioners;  // partition: title -> what it saves and recomputes
  bool operator==(const StageView&) const = default;
};

StageView stageView(Stage s, const StageRecord& record);

// The compiled listings (LLVM IR, asm, PTX, SASS) among a session's stored code, as their tabs
// show them (core/codegen/compiled_listing): debug-only lines out, each line linked to its source.
std::vector<CodeViewData> listingViews(const std::vector<StoredSource>& sources, const std::vector<StoredKernelSpan>& spans);
// Where the kernels' own lines begin in the generated source of kind `source` ("cpp", "cuda") of
// graph `graph` (core/codegen/compiled_listing's ownLinesFrom), from the stored spans.
int ownLinesFrom(const std::vector<StoredKernelSpan>& spans, const std::string& graph, const std::string& source);

}  // namespace fusebox

// A self-contained HTML report of a session (no external files): stage graphs as inline SVG laid
// out by Graphviz, fusion decisions, kernels with their profile (bar chart and per-iteration
// timeline as inline SVG), generated code; with a second session, the fusion comparison.
#pragma once

#include <string>

#include "sessions/session_store.h"

namespace fusebox {

struct ReportOptions {
  // Graphs with more nodes than this are listed, not drawn (a 3,000-node joint graph as SVG is
  // tens of MB); the GUI draws them.
  int maxDrawnNodes = 1500;
  bool graphs = true;  // false: no graph section (the PDF draws the graphs itself)
  // What the compilers made of the generated code (LLVM IR, assembly, PTX): thousands of lines
  // a printed report leaves out unless asked (`fusebox report ... --include asm`).
  bool compiledCode = true;
  // Only the generated source of the session's own target (a CPU session's CUDA translation is
  // left out of a printed report).
  bool ownTargetOnly = false;
  // Which sections: the summary (header, stages, profile, partitions), the details (decisions,
  // kernels, code, compile log), or both. The PDF puts its graph pages between the two.
  enum class Part { Whole, Summary, Details };
  Part part = Part::Whole;
  // Generated sources from their first kernel on: the prelude of helpers every module repeats
  // (hundreds of lines) left out with one line saying so, the buffer table at the top kept.
  bool preludeOut = false;
};

std::string htmlReport(const SessionStore& store, int64_t session, const ReportOptions& options = {});
std::string htmlComparisonReport(const SessionStore& storeA, int64_t a, const SessionStore& storeB, int64_t b,
                                 const ReportOptions& options = {});

}  // namespace fusebox

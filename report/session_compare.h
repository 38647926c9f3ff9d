// The comparison of two sessions of one model (yesterday's and today's, fused and unfused,
// default and min-cut). Everything is matched by traced provenance, never by loop-IR ids, which
// differ between configs: a traced op is regrouped when the traced ops computed beside it differ;
// decisions are matched by what their two nodes compute; kernels are paired by the traced ops
// they compute, and their time difference is judged against the noise of both runs.
#pragma once

#include <string>
#include <vector>

#include "report/session_summary.h"

namespace fusebox {

struct TracedRegrouping {  // a traced op computed together with different ops on the two sides
  std::string graph;
  int64_t traced = 0;
  std::string label;                             // "linear (fc1)", from the traced graph
  std::vector<std::string> kernelsA, kernelsB;   // the kernels computing it (none: not computed there)
  std::vector<std::string> matesA, matesB;       // labels of the other traced ops those kernels compute
};

struct DecisionDiff {  // a pair of computations fused on one side only
  std::string graph, kind;
  std::string what;                // "linear (fc1) + relu": what the two nodes compute
  std::string nodesA, nodesB;      // "l3 + l5" on each side ("" when not considered there)
  std::string reasonA, reasonB;    // "" when not considered on that side
  bool fusedA = false, fusedB = false;
};

struct KernelDelta {  // kernels of the two runs paired by the traced ops they compute
  std::string graph;
  std::string kernelA, kernelB;  // "" on a side with no counterpart
  double msA = 0, msB = 0;       // medians over the runs' iterations (warm-up left out)
  double noiseMs = 0;            // half of both p10-p90 spreads added: smaller changes are noise
  double overlap = 0;            // traced ops in common / in either (1: the same ops)
  bool paired() const { return !kernelA.empty() && !kernelB.empty(); }
  // The timer's own resolution as a floor: with a few samples the spread can be 0, and a change of
  // a few nanoseconds is not a change.
  static constexpr double kResolutionMs = 0.0005;
  bool beyondNoise() const {
    double band = noiseMs > kResolutionMs ? noiseMs : kResolutionMs;
    return paired() && (msB - msA > band || msA - msB > band);
  }
};

struct FusionComparison {
  SessionInfo a, b;
  std::vector<TracedRegrouping> regrouped;
  std::vector<DecisionDiff> decisions;
  std::vector<KernelDelta> kernels;        // only when both sides were run; A's launch order, then B's extras
  std::vector<KernelTiming> timingsA, timingsB;
  int kernelsA = 0, kernelsB = 0;
  double totalMsA = 0, totalMsB = 0;       // medians of the per-iteration totals (0: never run)
  double totalNoiseMs = 0;                 // half of both runs' p10-p90 spreads of those totals
};

// Throws SessionError when the sessions are of different models (nothing of them corresponds).
FusionComparison compareSessions(const SessionStore& storeA, int64_t a, const SessionStore& storeB, int64_t b);

}  // namespace fusebox

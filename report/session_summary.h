// What reports and views derive from a stored session: each kernel's time over the latest run,
// and the fusion comparison of two sessions (which loop-IR nodes were grouped differently, the
// decisions that differ, and the time per kernel on both sides). Pure reads of the store.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sessions/session_store.h"

namespace fusebox {

struct KernelTiming {
  std::string graph, kernel;
  double medianMs = 0;
  double minMs = 0;
  double p10Ms = 0, p90Ms = 0, maxMs = 0;  // the spread over iterations
  int samples = 0;
  int64_t bytes = 0;
  std::vector<StoredKernelOp> ops;  // what it runs, in order (from the schedule's record)
  double gbPerSec() const { return medianMs > 0 ? bytes / (medianMs * 1e6) : 0; }
};

// The first iterations of a run that the per-kernel figures leave out (caches and page faults
// still warming): one when the run has at least three, else none.
int warmupIterations(size_t iterations);
// Per kernel of the session's latest run, in launch order, its warm-up iterations left out;
// empty when it was never run.
std::vector<KernelTiming> latestRunTimings(const SessionStore& store, int64_t session);
// A kernel's ops in execution order as one line, recomputed ones starred:
// "sub* mul sum (1 of 3 recomputed in the backward)".
std::string opListText(const std::vector<StoredKernelOp>& ops);
size_t recomputedCount(const std::vector<StoredKernelOp>& ops);
// Sum of the kernels' time per iteration of the latest run (the timeline).
std::vector<double> iterationTotals(const SessionStore& store, int64_t session);

struct NodeGrouping {  // one loop-IR node whose kernel-mates differ between the sessions
  std::string graph;
  int node = 0;
  std::string kernelA, kernelB;        // the kernel it is in on each side ("" when absent)
  std::vector<int> matesA, matesB;     // the other nodes of that kernel
};

struct DecisionDiff {
  std::string graph;
  int first = 0, second = 0;
  std::string kind;
  std::string reasonA, reasonB;  // "" when the pair was not considered on that side
  bool fusedA = false, fusedB = false;
};

struct FusionComparison {
  SessionInfo a, b;
  std::vector<NodeGrouping> regrouped;
  std::vector<DecisionDiff> decisions;
  std::vector<KernelTiming> timingsA, timingsB;
  int kernelsA = 0, kernelsB = 0;
  double totalMsA = 0, totalMsB = 0;
};

// Throws SessionError when the sessions are of different models (their node ids do not match).
FusionComparison compareSessions(const SessionStore& storeA, int64_t a, const SessionStore& storeB, int64_t b);

}  // namespace fusebox

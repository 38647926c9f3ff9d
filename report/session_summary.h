// What reports and views derive from a stored session: each kernel's time over the latest run,
// its ops, the per-iteration totals. Pure reads of the store (report/session_compare compares two).
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
  double startMs = -1;  // median of when it began in its iteration (-1: the run did not record it)
  double launchMs = -1;  // CUDA: median of when the host issued it, same axis (-1: not recorded)
  double gbPerSec() const { return medianMs > 0 ? bytes / (medianMs * 1e6) : 0; }
};

// The median and the 10th and 90th percentiles of some timings (zeros when empty).
struct Spread {
  double median = 0, p10 = 0, p90 = 0;
};
Spread spreadOf(std::vector<double> ms);

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

}  // namespace fusebox

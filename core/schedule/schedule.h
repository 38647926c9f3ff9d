// Stage 5: the fusion scheduler. Groups loop-IR nodes into kernels and logs every candidate pair
// it considered as a FusionDecision (fused or not, the reason in words, the score in bytes of
// memory traffic saved).
//
// A kernel iterates a grid of M rows by K columns. Reductions fix (M, K) = (output elements,
// reduced elements); a pointwise node joins as a "full" item (M*K points, one per (m, k)) or a
// "row" item (M points, one per row). Two nodes fuse when their grids agree, every read of one by
// the other is at the point being computed (so the value can stay in a register), the merge
// creates no cycle, no Extern is involved, and the kernel stays under the size limit. The one
// exception to the last rule: a conv2d forward absorbs the bias, residual and clamp after it as
// its epilogue (conv_epilogue.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/loopir/loop_ir.h"
#include "core/schedule/concat_in_place.h"
#include "core/schedule/conv_epilogue.h"

namespace fusebox {

struct ScheduleConfig {
  bool fusion = true;          // off: one kernel per node (the baseline to compare against)
  bool horizontal = true;      // siblings that read the same buffer
  int maxNodesPerKernel = 32;  // kernel size limit
  // A grid with fewer rows than this runs on few threads (CPU) or blocks (GPU): large pointwise
  // work (64K elements or more) is not fused into it, so it keeps its own parallel kernel.
  int64_t minRowsToAbsorbPointwise = 64;
  bool convEpilogues = true;  // a conv2d forward applies the bias, residual and clamp after it
  bool concatInPlace = true;  // convolutions write their slices of a concatenation (concat_in_place.h)
  bool operator==(const ScheduleConfig&) const = default;
};

struct FusionDecision {
  int first = 0, second = 0;  // loop-IR node ids (the producer first for vertical pairs)
  std::string kind;           // "vertical" or "horizontal"
  bool fused = false;
  std::string reason;         // e.g. "fused: 4.0 MB saved", "incompatible iteration space 8192x4096 vs 8192"
  int64_t score = 0;          // bytes of memory traffic the fusion saves
};

struct KernelItem {
  int node = 0;
  bool row = false;  // one point per row (m) instead of one per (m, k)
};

struct Kernel {
  int id = 0;
  std::string name;               // "kernel3" or "extern3_matmul"
  bool isExtern = false;
  std::vector<KernelItem> items;  // nodes in execution order
  // Consecutive items that share one loop over k (indices into items). A row item is a
  // segment of its own; an item that needs a reduction of the current loop starts a new one.
  std::vector<std::vector<int>> segments;
  int64_t M = 1, K = 1;           // the grid
  std::vector<std::string> storedBuffers;  // buffers it writes to memory
  std::vector<std::string> localBuffers;   // buffers it keeps in registers only
  std::vector<std::string> readBuffers;    // buffers it reads from memory
  // An extern conv2d's fused epilogue (its items after the first). A convolution writing its slice
  // of a concatenation in place has the concatenation as its second item, as each of its
  // convolutions' kernels has: that node has no kernel of its own.
  std::optional<ConvEpilogue> epilogue;
  int64_t bytesRead = 0, bytesWritten = 0;
};

struct MemoryPlan {
  int64_t peakIntermediateBytes = 0;    // with buffer reuse
  int64_t totalIntermediateBytes = 0;   // without reuse
  std::vector<std::pair<std::string, std::string>> reuse;  // (buffer, the earlier buffer whose memory it takes)
  // Per kernel in execution order: intermediate bytes in use while it runs (what it writes and
  // everything still to be read later), and the memory allocated so far (reused blocks count once).
  std::vector<int64_t> liveBytes, allocatedBytes;
};

struct Schedule {
  std::vector<Kernel> kernels;  // execution order
  std::vector<FusionDecision> decisions;
  MemoryPlan memory;
  // The forward or backward of a training step: convolutions keep the interpreter's order of sums
  // (no Winograd), since a rounding difference at a ReLU's 0 or a max pool's tie flips a gradient.
  bool trainingGraph = false;
  std::string str() const;  // kernels with their nodes, then the decision log
};

Schedule schedule(const LoopProgram& p, const ScheduleConfig& config = {});

// A node's position in a kernel grid as expressions of the kernel variables m and k.
std::map<std::string, IndexExpr> kernelVarMap(const LoopNode& n, bool row, int64_t M, int64_t K);

}  // namespace fusebox

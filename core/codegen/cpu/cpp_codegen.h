// Stage 6 (CPU): readable C++ for each fused kernel and a wrapper that runs them in order.
// Every kernel function is `extern "C" void kernelN(long begin, long end, void* bufs)` over
// rows [begin, end) of its grid; comments name the loop-IR nodes and the traced ops (with source
// locations) each part comes from.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/loopir/loop_ir.h"
#include "core/schedule/schedule.h"

namespace fusebox {

struct GeneratedKernel {
  int kernel = 0;           // index into Schedule::kernels
  std::string name;
  int64_t rows = 0;         // how many rows the wrapper launches
  int firstLine = 0, lastLine = 0;  // lines of its function in the source (1-based)
  std::vector<NodeId> provenance;   // traced nodes it computes
};

struct CppModule {
  std::string source;
  std::string entry = "fusebox_main";  // void fusebox_main(const FuseboxRuntime*, void* const* bufs)
  std::vector<GeneratedKernel> kernels;  // one per schedule kernel, in order
  std::vector<std::string> bufferOrder;  // bufs[i] is the buffer named bufferOrder[i]
  std::vector<int64_t> scratchBytes;     // per kernel: scratch the wrapper expects after the buffers
  // Buffers that need more bytes than their shape says: channel-blocked ones whose channels are
  // padded to a whole block (channel_blocking.h).
  std::map<std::string, int64_t> paddedBytes;
  std::map<int, std::string> indexChecks;  // loop node id -> its description, for index faults
};

// `describe` names a traced node for comments (e.g. "linear @mlp.fbx:6:14"); may be empty.
CppModule generateCpp(const LoopProgram& p, const Schedule& s,
                      const std::function<std::string(NodeId)>& describe = {});

}  // namespace fusebox

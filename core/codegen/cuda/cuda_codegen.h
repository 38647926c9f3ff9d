// Stage 6 (CUDA): CUDA C++ for each fused kernel from the same scheduled loop IR as the CPU
// printer. Pointwise kernels are grid-stride loops with one thread per element; row reductions
// give each row a block (partials per thread, then warp shuffles and a block reduction);
// column reductions give each row a thread. Externs are launched by the host: matmuls through
// cuBLAS, convolution / pooling / scatter-add through prelude kernels.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/loopir/loop_ir.h"
#include "core/schedule/schedule.h"

namespace fusebox {

struct CudaStep {  // one kernel launch of a multi-launch kernel (split reductions)
  std::string name;
  int64_t grid = 1, block = 256;
};

struct CudaLaunch {
  enum class Kind { Generated, Matmul, Conv, Pool, IndexAdd };
  Kind kind = Kind::Generated;
  int kernel = 0;            // index into Schedule::kernels
  std::string name;          // generated kernel name or the prelude kernel it launches
  int64_t grid = 1, block = 256, blockY = 1;
  std::vector<CudaStep> steps;  // when non-empty, Generated kernels run these in order instead
  // Matmul: buffer table slots and sizes (row-major C[b] = op(A[b]) @ op(B[b])).
  int a = -1, b = -1, c = -1, extra = -1;
  int64_t cOffset = 0;  // Conv: elements into slot c where the output starts (a slice of a concatenation)
  int64_t batch = 1, n = 0, k = 0, m = 0;
  bool transA = false, transB = false;
  // Conv / Pool / IndexAdd: the integer fields of the prelude's parameter struct, in order.
  std::vector<int64_t> ints;
  // Conv: the forward's epilogue (core/schedule/conv_epilogue.h); slots -1 where absent.
  int bias = -1, residual = -1, lower = 0, upper = 0;
  float lo = 0, hi = 0;
  int silu = 0;
  int mode = 0;
  int site = -1;  // IndexAdd: the loop node its index faults name
  int firstLine = 0, lastLine = 0;
  std::vector<NodeId> provenance;
};

struct CudaModule {
  std::string source;
  std::vector<CudaLaunch> launches;     // in execution order, one per schedule kernel
  std::vector<std::string> bufferOrder;  // slot i of the device buffer table
  std::vector<std::string> entryPoints;  // every extern "C" __global__ function
  std::map<int, std::string> indexChecks;  // loop node id -> its description, for index faults
};

CudaModule generateCuda(const LoopProgram& p, const Schedule& s, const std::function<std::string(NodeId)>& describe = {});

}  // namespace fusebox

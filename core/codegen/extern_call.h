// The parameters of an Extern loop-IR node as both backends' extern kernels take them: matmul
// sizes and transposes, the integer fields of the convolution and pooling parameter structs,
// the scatter-add geometry. One derivation shared by the CPU and CUDA printers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/loopir/loop_ir.h"

namespace fusebox {

struct ExternCall {
  const ExternPrim* prim = nullptr;  // its row of core/ops/extern_prims.def
  ExternKind kind = ExternKind::Matmul;
  std::vector<std::string> inputs;  // buffers, in the prim's input order
  std::string output;
  // Matmul: C[b] (n x m) = op(A[b]) (n x k) @ op(B[b]) (k x m).
  int64_t batch = 1, n = 0, k = 0, m = 0;
  bool transA = false, transB = false;
  // Conv (16 fields: N C H W O KH KW OH OW groups sh sw ph pw dh dw), Pool (11 fields: planes H W
  // OH OW kh kw sh sw ph pw), IndexAdd (outer rows n inner).
  std::vector<int64_t> fields;
  // Pool: the preludes' FbPool mode code, 0 max, 1 avg, 2 adaptive avg, +10 for the gradient.
  int poolMode() const;
  // Multiply-adds x 2 for GEMMs and convolutions (their gradients too); 0 for the others, whose
  // work is in proportion to their bytes.
  int64_t flops() const;
  int64_t rows = 0;    // the independent output units a parallel loop covers (CPU)
  int64_t elements = 0;  // output elements (GPU: one thread each)
};

// Throws Error for an extern op neither backend implements, or a dtype other than f32.
ExternCall describeExtern(const LoopProgram& p, const LoopNode& n);

}  // namespace fusebox

// The prims that lower to an Extern loop-IR node (matmul, convolution, pooling, scatter-add):
// one table (extern_prims.def) that lowering, the loop-IR interpreter, the extern-call
// description both code printers share, and the scheduler read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fusebox {

enum class ExternOp : uint8_t {
#define FB_EXTERN_PRIM(Enum, ...) Enum,
#include "core/ops/extern_prims.def"
#undef FB_EXTERN_PRIM
};

enum class ExternKind { Matmul, Conv2d, Conv2dInputGrad, Conv2dWeightGrad, Pool, IndexAdd };
enum class PoolWindow { None, Max, Avg, AdaptiveAvg };

struct ExternPrim {
  ExternOp op;
  std::string prim;  // "conv2d_backward_input", without "prims."
  ExternKind kind;
  PoolWindow pool;
  bool gradient;
  int integerInput;  // the input holding i64 indices, or -1
  std::string qualifiedName() const { return "prims." + prim; }  // the prim's Node::op
};

// Every row, in ExternOp order.
const std::vector<ExternPrim>& externPrims();
const ExternPrim& externPrim(ExternOp op);
// The row of prim `name` (with or without "prims."), or nullptr.
const ExternPrim* findExternPrim(const std::string& name);

}  // namespace fusebox

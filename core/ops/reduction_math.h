// The reductions (sum, max, min, prod): one table (reduction_math.def) that lowering, the loop-IR
// interpreter, both code printers, the partitioner and the fuzzer read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fusebox {

enum class ReduceOp : uint8_t {
#define FB_REDUCTION(Enum, ...) Enum,
#include "core/ops/reduction_math.def"
#undef FB_REDUCTION
};

struct ReductionMath {
  ReduceOp op;
  std::string name;  // "max": the loop IR's word
  std::string prim;  // "amax": the prim and torch op lowered to it
  double identity;
  double (*step)(double acc, double x);  // the reference combine (interpreters)
  const char* helper;                    // C combine function, or nullptr for +=
  const char* cudaFunctor;               // the CUDA prelude's block-reduce functor
  bool exactInAnyOrder;
};

// Every row, in ReduceOp order.
const std::vector<ReductionMath>& reductionMathOps();
const ReductionMath& reductionMath(ReduceOp op);
// The row whose prim (torch op) is `prim`, or nullptr.
const ReductionMath* findReductionByPrim(const std::string& prim);

}  // namespace fusebox

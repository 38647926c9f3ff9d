// One small, numerically safe instance of every torch-level op, shared by the gradient and
// decomposition tests: a graph with a single node over seeded random inputs.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/interp/tensor.h"
#include "core/ir/graph.h"

namespace fusebox::test {

struct InputGen {
  enum class Kind { Normal, Positive, AwayFromZero, Int, Bool };
  std::vector<int64_t> shape;
  Kind kind = Kind::Normal;
  int64_t range = 0;  // Int: values in [0, range)
};

struct OpCase {
  std::string name;  // unique test name, e.g. "gelu_tanh"
  std::string op;
  std::vector<InputGen> inputs;
  AttrMap attrs;
};

const std::vector<OpCase>& opCases();

// gtest prints the case by name instead of its bytes.
inline void PrintTo(const OpCase& c, std::ostream* os) { *os << c.name; }

// The one-node graph of a case, with inputs of `floatType` (f64 or f32).
Graph opCaseGraph(const OpCase& c, DType floatType = DType::F64);
// Seeded inputs for the graph of a case.
std::vector<Tensor> opCaseInputs(const OpCase& c, const Graph& g, uint64_t seed);

}  // namespace fusebox::test

// The memory budget of a fuzz target: Fusebox's own limit (memory_budget.h, by default half of
// physical RAM) must stop a hostile model before libFuzzer's malloc/RSS limit does (run_fuzz.sh
// gives 2560 MB; ASan's shadow and the corpus need the rest), so that a huge tensor is the
// LimitError users get, not an out-of-memory report.
#pragma once

#include "core/ir/memory_budget.h"

namespace fusebox::fuzz {

constexpr int64_t kFuzzMemoryBudget = int64_t{1} << 30;

inline void limitMemory() { setMemoryBudget(kFuzzMemoryBudget); }

}  // namespace fusebox::fuzz

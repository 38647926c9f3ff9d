// Delta debugging of a failing program: drop outputs, statements (rewiring their uses to an
// operand or an earlier value), unused params and inputs and keyword attributes, shrink sizes,
// make float literals 1.0, keeping each step only while the program still fails the same way.
#pragma once

#include <functional>

#include "core/fuzz/fuzz_program.h"

namespace fusebox::fuzz {

struct MinimizeOptions {
  int maxChecks = 150;       // calls of the predicate
  double maxSeconds = 90;    // wall time
};

// True when `candidate` still fails with the original signature.
using StillFails = std::function<bool(const FuzzProgram& candidate)>;

struct MinimizeResult {
  FuzzProgram program;
  int checks = 0;
  int accepted = 0;  // reductions kept
};

MinimizeResult minimizeProgram(const FuzzProgram& failing, const StillFails& stillFails, const MinimizeOptions& options = {});

}  // namespace fusebox::fuzz

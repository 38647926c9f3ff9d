// Shared by the CPU end-to-end tests: run a compiled pipeline and expect every output (and
// gradient) to match the reference interpreter.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "core/runtime/model_runner.h"

namespace fusebox::test {

inline void expectCpuMatchesInterpreter(const Pipeline& p, int iters, uint64_t seed, unsigned threads, const std::string& label) {
  RunReport r = runOnCpu(p, iters, seed, threads);
  ASSERT_FALSE(r.checks.empty()) << label;
  for (const OutputCheck& c : r.checks)
    EXPECT_TRUE(c.ok) << label << " " << c.name << ": max abs " << c.diff.maxAbs << " rel " << c.diff.maxRel;
}

}  // namespace fusebox::test

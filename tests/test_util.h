// Small helpers shared by the unit tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "core/frontend/fbx_parser.h"
#include "core/ir/graph.h"
#include "core/trace/trace.h"

namespace fusebox::test {

// Traces model source text (a test's own small model).
inline Graph traceSource(const std::string& src, const TraceOptions& opts = {}) {
  return trace(parseModel(src, "test.fbx"), opts);
}

// Runs `f`, expecting it to throw an exception of type E whose what() contains `needle`.
template <class E, class F>
void expectThrowContaining(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected an exception containing: " << needle;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message was: " << e.what();
  }
}

}  // namespace fusebox::test

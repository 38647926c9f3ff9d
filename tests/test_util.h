// Small helpers shared by the unit tests.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <typeinfo>

#include "core/frontend/fbx_parser.h"
#include "core/ir/graph.h"
#include "core/ir/memory_budget.h"
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

// Sets the memory budget (--max-memory) for one test and puts the previous one back.
struct BudgetScope {
  int64_t saved = memoryBudget();
  explicit BudgetScope(int64_t bytes) { setMemoryBudget(bytes); }
  ~BudgetScope() { setMemoryBudget(saved); }
};

// Runs `f`, expecting an exception of exactly class E (not a subclass or a base of it) whose
// what() contains every needle.
template <class E, class F>
void expectExactError(F&& f, std::initializer_list<std::string> needles) {
  try {
    f();
    ADD_FAILURE() << "expected " << typeid(E).name();
  } catch (const Error& e) {
    EXPECT_EQ(typeid(e), typeid(E)) << "got " << typeid(e).name() << ": " << e.what();
    for (const std::string& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << "message was: " << e.what();
  }
}

}  // namespace fusebox::test

// The minimizer on synthetic failures: a predicate stands in for the compiler, so the test is
// fast and says exactly what the smallest failing program is.
#include <gtest/gtest.h>

#include "core/fuzz/fuzz_program.h"
#include "core/fuzz/minimizer.h"
#include "core/fuzz/program_generator.h"
#include "test_util.h"

namespace fusebox::fuzz {
namespace {

FuzzProgram sample() {
  FuzzProgram p;
  p.inputs = {{"x0", "f32[33, 7]", ""}, {"x1", "f32[7]", ""}, {"x2", "i64[5] range(0, 3)", ""}};
  p.stmts = {{"", "v0", "v0 = relu(x0)", false},
             {"", "v1", "v1 = v0 + x1", false},
             {"s0", "p0", "param p0: f32[4, 7] = randn(seed=1, std=0.5)", true},
             {"s0", "v2", "v2 = linear(v1, p0)", false},
             {"", "v3", "v3 = sum(v2, [0])", false},
             {"", "v4", "v4 = exp(v3)", false}};
  p.outputs = {"v4", "x2"};
  return p;
}

bool traces(const FuzzProgram& p) {
  try {
    test::traceSource(printProgram(p));
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

TEST(FuzzProgram, PrintsNestedScopesAndParses) {
  FuzzProgram p = sample();
  p.stmts[2].scope = p.stmts[3].scope = "s0.s1";
  std::string text = printProgram(p);
  EXPECT_NE(text.find("  scope s0 {\n    scope s1 {\n      param p0"), std::string::npos) << text;
  EXPECT_TRUE(traces(p)) << text;
}

TEST(FuzzProgram, CommentsHoldNoNewline) {
  std::string c = programComment("line one\nline two\r\x01");
  EXPECT_EQ(c.find('\n'), std::string::npos);
  EXPECT_EQ(c.find('\r'), std::string::npos);
  FuzzProgram p = sample();
  p.comment = c;
  EXPECT_TRUE(traces(p));
}

TEST(FuzzProgram, RenamesWholeWordsOnly) {
  EXPECT_EQ(renameWord("v1 + v12 * s0.v1 - v1", "v1", "x0"), "x0 + v12 * s0.v1 - x0");
  EXPECT_EQ(renameWord("gelu(v1, approximate=\"v1\")", "v1", "v2"), "gelu(v2, approximate=\"v1\")");
  EXPECT_TRUE(mentionsName("sum(v3, [0])", "v3"));
  EXPECT_FALSE(mentionsName("sum(v31, [0])", "v3"));
}

// The "bug": an exp of anything with a size-33 dim still in the program. The smallest failing
// program keeps one input of that size and an exp, nothing else.
TEST(Minimizer, ShrinksToTheStatementsAndSizesThatFail) {
  auto stillFails = [](const FuzzProgram& c) {
    std::string text = printProgram(c);
    return traces(c) && text.find("exp(") != std::string::npos && text.find("33") != std::string::npos;
  };
  FuzzProgram p = sample();
  ASSERT_TRUE(stillFails(p));
  MinimizeResult r = minimizeProgram(p, stillFails);
  std::string text = printProgram(r.program);
  EXPECT_TRUE(stillFails(r.program)) << text;
  EXPECT_EQ(r.program.outputs.size(), 1u) << text;
  EXPECT_EQ(r.program.stmts.size(), 1u) << text;  // exp of an input
  EXPECT_LE(r.program.inputs.size(), 2u) << text;  // x2 is gone; the size-33 input must stay
  EXPECT_EQ(text.find("7"), std::string::npos) << text;  // the 7s shrank, the 33 could not
  EXPECT_GT(r.accepted, 0);
}

// The "bug": a softmax of something plus 3.5. The attribute and the literal the failure does not
// need go (the literal becomes 1.0); the one it needs stays.
TEST(Minimizer, DropsAttributesAndSimplifiesLiterals) {
  FuzzProgram p;
  p.inputs = {{"x0", "f32[3, 5]", ""}};
  p.stmts = {{"", "v0", "v0 = gelu(x0, approximate=\"tanh\") * -2.75", false},
             {"", "v1", "v1 = amax(v0, [1], keepdim=true)", false},
             {"", "v2", "v2 = softmax(v1 + 3.5, 1)", false}};
  p.outputs = {"v2"};
  auto stillFails = [](const FuzzProgram& c) {
    std::string text = printProgram(c);
    return traces(c) && text.find("softmax(") != std::string::npos && text.find("3.5") != std::string::npos;
  };
  ASSERT_TRUE(stillFails(p));
  MinimizeResult r = minimizeProgram(p, stillFails);
  std::string text = printProgram(r.program);
  EXPECT_EQ(text.find("approximate"), std::string::npos) << text;
  EXPECT_EQ(text.find("2.75"), std::string::npos) << text;
  EXPECT_NE(text.find("3.5"), std::string::npos) << text;
  EXPECT_TRUE(stillFails(r.program)) << text;
}

TEST(Minimizer, NeverReturnsAProgramThatPasses) {
  int calls = 0;
  auto stillFails = [&](const FuzzProgram& c) { return ++calls % 3 == 0 && traces(c); };  // erratic predicate
  FuzzProgram p = sample();
  MinimizeResult r = minimizeProgram(p, stillFails);
  EXPECT_TRUE(traces(r.program));
  EXPECT_LE(r.checks, MinimizeOptions{}.maxChecks);
}

TEST(Minimizer, StopsAtItsCheckBudget) {
  MinimizeOptions o;
  o.maxChecks = 3;
  MinimizeResult r = minimizeProgram(generateFuzzProgram(7, {}), [](const FuzzProgram&) { return true; }, o);
  EXPECT_LE(r.checks, 3);
}

}  // namespace
}  // namespace fusebox::fuzz

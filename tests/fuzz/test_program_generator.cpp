// The fuzzer's program generator: every program it writes parses and traces (a shape error is
// a generator bug), the same seed gives the same text, and the edge sizes the fuzzer exists
// for do appear.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "core/fuzz/program_generator.h"
#include "core/ops/registry.h"
#include "test_util.h"

namespace fusebox::fuzz {
namespace {

TEST(ProgramGenerator, ThousandSeedsParseAndTrace) {
  for (bool training : {false, true}) {
    GeneratorOptions o;
    o.training = training;
    for (uint64_t seed = 0; seed < 1000; ++seed) {
      std::string text = generateProgram(seed, o);
      try {
        Graph g = test::traceSource(text);
        if (training) {
          ASSERT_EQ(g.outputs().size(), 1u) << text;
          EXPECT_TRUE(g.type(g.outputs()[0]).shape.empty()) << "training loss is not a scalar:\n" << text;
        }
      } catch (const std::exception& e) {
        FAIL() << "seed " << seed << (training ? " (training)" : "") << ": " << e.what() << "\n" << text;
      }
    }
  }
}

TEST(ProgramGenerator, SameSeedSameProgram) {
  for (uint64_t seed : {0ull, 1ull, 42ull, 123456789ull}) {
    EXPECT_EQ(generateProgram(seed, {}), generateProgram(seed, {}));
    GeneratorOptions t;
    t.training = true;
    EXPECT_EQ(generateProgram(seed, t), generateProgram(seed, t));
  }
  EXPECT_NE(generateProgram(1, {}), generateProgram(2, {}));
}

TEST(ProgramGenerator, EdgeSizesAndOpsAppear) {
  std::set<int64_t> sizes;
  std::set<std::string> ops;
  bool longRow = false, keepdim = false, scope = false, nestedScope = false, intInput = false, boolInput = false,
       reduceAfterView = false;
  static const std::regex call(R"(([a-z_0-9]+)\()");
  for (uint64_t seed = 0; seed < 500; ++seed) {
    std::string text = generateProgram(seed, {});
    Graph g = test::traceSource(text);
    for (const Node& n : g.nodes()) ops.insert(n.op);
    for (const GraphInput& in : g.inputs())
      for (const Dim& d : g.type(in.value).shape) {
        if (!d.isConstant()) continue;
        sizes.insert(d.value());
        longRow |= d.value() > 1024;
      }
    keepdim |= text.find("keepdim=true") != std::string::npos;
    scope |= text.find("scope s") != std::string::npos;
    nestedScope |= std::regex_search(text, std::regex(R"(scope s\d+ \{\n\s+scope s)"));
    intInput |= text.find(": i64[") != std::string::npos;
    boolInput |= text.find(": bool[") != std::string::npos;
    reduceAfterView |= std::regex_search(text, std::regex(R"((sum|mean|amax|amin|softmax|log_softmax)\((permute|transpose|reshape|slice|expand)\()")) ||
                       std::regex_search(text, std::regex(R"(v(\d+) = (permute|transpose|reshape|slice|expand|view)\(.*\n\s+v\d+ = (sum|mean|amax|amin|softmax|log_softmax)\(v\1,)"));
  }
  for (int64_t s : {1, 2, 3, 5, 7, 31, 33, 127}) EXPECT_TRUE(sizes.count(s)) << "size " << s << " never drawn";
  EXPECT_TRUE(longRow);
  EXPECT_TRUE(keepdim);
  EXPECT_TRUE(scope);
  EXPECT_TRUE(nestedScope);
  EXPECT_TRUE(intInput);
  EXPECT_TRUE(reduceAfterView);
  EXPECT_TRUE(boolInput);
  // Every forward op of the registry, but the backward ops (made by autograd) and sym_size (a
  // shape query the tracer makes for symbolic dims; the generator's dims are concrete).
  for (const OpSchema* op : OpRegistry::instance().torchOps()) {
    if (op->name == "sym_size" || op->name.find("_backward") != std::string::npos) continue;
    EXPECT_TRUE(ops.count(op->name)) << op->name << " never generated";
  }
}

}  // namespace
}  // namespace fusebox::fuzz

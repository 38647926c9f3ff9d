// A model file can never crash, hang or exhaust the machine: every input here is generated in the
// test (deep nesting, long chains, many statements, overflowing dims, huge --dim, FIFOs and devices
// as model paths) and must give its exact error class with a message that names the location, or,
// for legitimate large input (long chains, many statements), trace quickly.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/frontend/fbx_parser.h"
#include "core/frontend/model_file.h"
#include "core/frontend/model_loader.h"
#include "core/interp/interpreter.h"
#include "core/ir/memory_budget.h"
#include "core/trace/trace.h"
#include "test_util.h"

using namespace fusebox;
namespace fs = std::filesystem;

namespace {

std::string repeat(const std::string& s, int n) {
  std::string out;
  out.reserve(s.size() * n);
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

using test::BudgetScope;
using test::expectExactError;


// A scratch directory of this process, removed at the end of the test.
struct TempDir {
  fs::path path = fs::temp_directory_path() / ("fusebox_limits_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

std::string model(const std::string& body) { return "model deep(x: f32[2, 3]) {\n" + body + "\n}\n"; }

Graph traceText(const std::string& src, const TraceOptions& o = {}) { return trace(parseModel(src, "deep.fbx"), o); }

}  // namespace

// ---- nesting: a ParseError at the opening token, never a stack overflow ----

TEST(Limits, FiveThousandNestedParenthesesIsAParseErrorAtTheLocation) {
  std::string src = model("  return " + repeat("(", 5000) + "x" + repeat(")", 5000));
  // the 257th '(' is where the limit is crossed: line 2, column 10 + 256
  expectExactError<ParseError>([&] { parseModel(src, "deep.fbx"); }, {"deep.fbx:2:266:", "nested too deeply", "256"});
}

TEST(Limits, NestedCallsListsAndUnaryMinusAreBoundedToo) {
  expectExactError<ParseError>([&] { parseModel(model("  return " + repeat("relu(", 5000) + "x" + repeat(")", 5000)), "deep.fbx"); },
                          {"deep.fbx:2:", "call nested too deeply"});
  expectExactError<ParseError>([&] { parseModel(model("  return sum(" + repeat("[", 5000) + "x" + repeat("]", 5000) + ")"), "deep.fbx"); },
                          {"deep.fbx:2:", "nested too deeply"});
  expectExactError<ParseError>([&] { parseModel(model("  return " + repeat("-", 100000) + "x"), "deep.fbx"); },
                          {"deep.fbx:2:", "unary minus nested too deeply"});
}

TEST(Limits, NestingUpToTheLimitStillTraces) {
  Graph g = traceText(model("  return " + repeat("(", 200) + "relu(x)" + repeat(")", 200)));
  EXPECT_EQ(g.nodes().size(), 1u);
  Graph n = traceText(model("  return " + repeat("- ", 100) + "x"));  // an even count of negations
  EXPECT_EQ(n.nodes().size(), 100u);
}

TEST(Limits, WhatParsesAtTheNestingLimitAlsoTraces) {
  // 255 calls, each holding a sum and a product: three syntax-tree levels per parsed level
  Graph g = traceText(model("  return " + repeat("relu(x + 2.0 * ", 255) + "x" + repeat(")", 255)));
  EXPECT_EQ(g.nodes().size(), 255u * 4);  // relu, add, mul, and the scalar 2.0
  // scopes and expressions share the parser's count: 100 scopes around 150 such calls
  std::string scopes = repeat("scope s {\n", 100) + "h = " + repeat("relu(x + 2.0 * ", 150) + "x" + repeat(")", 150) + "\n" + repeat("}\n", 100);
  EXPECT_NO_THROW(traceText(model(scopes + "return h")));
}

TEST(Limits, TenThousandNestedScopesIsAParseErrorAtTheScope) {
  std::string src = model(repeat("scope s {\n", 10000) + "param w: f32[3] = zeros\n" + repeat("}\n", 10000) + "return x");
  // scope number 257 starts on line 2 + 256
  expectExactError<ParseError>([&] { parseModel(src, "deep.fbx"); }, {"deep.fbx:258:1:", "scope nested too deeply"});
}

TEST(Limits, TheTracerChecksDepthOnASyntaxTreeBuiltInCode) {
  ModelDef m = parseModel(model("  return x"), "deep.fbx");
  Expr e = m.body[0].values[0];
  for (int i = 0; i < 5000; ++i) {  // deeper than any parse can give; freed level by level below
    Expr n;
    n.kind = Expr::Kind::Negate;
    n.loc = SourceLoc{"built.fbx", 7, 1};
    n.args.push_back(std::move(e));
    e = std::move(n);
  }
  m.body[0].values[0] = std::move(e);
  expectExactError<ParseError>([&] { trace(m); }, {"built.fbx:7:1:", "nested too deeply to trace"});
  // unwind without a deep recursive destructor
  Expr top = std::move(m.body[0].values[0]);
  while (!top.args.empty()) {
    Expr next = std::move(top.args[0]);
    top = std::move(next);
  }
}

// ---- operator chains are flat: long legitimate expressions trace ----

TEST(Limits, FourThousandTermSumParsesFlatAndTraces) {
  std::string src = model("  return x" + repeat(" + x", 3999));
  ModelDef m = parseModel(src, "deep.fbx");
  const Expr& sum = m.body[0].values[0];
  ASSERT_EQ(sum.kind, Expr::Kind::Binary);
  EXPECT_EQ(sum.args.size(), 4000u);
  EXPECT_EQ(sum.text, repeat("+", 3999));
  Graph g = trace(m);
  EXPECT_EQ(g.nodes().size(), 3999u);
}

TEST(Limits, HundredThousandTermMixedChainTraces) {
  // a + b - c * d / e ...: two precedence levels, each a flat chain
  Graph g = traceText(model("  return x" + repeat(" + x * 2.0 - x / 4.0", 25000)));
  EXPECT_GT(g.nodes().size(), 100000u);
}

TEST(Limits, AnErrorInAChainPointsAtItsOperator) {
  expectExactError<ShapeError>([&] { traceText(model("  h = x + x + x -\n    \"text\"")); }, {"deep.fbx:2:17:", "operator '-'"});
}

// ---- scale: tracing is linear in the number of statements ----

TEST(Scale, TwentyThousandChainedStatementsTraceQuickly) {
  auto t0 = std::chrono::steady_clock::now();
  Graph g = traceText(model("  h = relu(x)\n" + repeat("  h = relu(h)\n", 19999) + "  return h"));
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(g.nodes().size(), 20000u);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "h_19999");  // every assignment of h keeps its own name
  EXPECT_LT(s, 10.0) << "quadratic naming is back? (bench/RESULTS.md, Scale: about 0.1 s)";
}

TEST(Scale, TwentyThousandDistinctAndCollidingNamesStayUnique) {
  std::string body = "  h = relu(x)\n";
  for (int i = 0; i < 10000; ++i) body += "  h_" + std::to_string(i + 1) + " = relu(h)\n  h = relu_1 + h\n";
  // relu_1 is not a variable: the body above would not trace; name it one first
  Graph g = traceText(model("  relu_1 = relu(x)\n" + body + "  return h"));
  std::set<std::string> names;
  for (const Value& v : g.values()) EXPECT_TRUE(names.insert(v.name).second) << "duplicate name " << v.name;
  EXPECT_EQ(g.nodes().size(), 1u + 1u + 20000u);
}

// ---- int64 overflow: a ShapeError naming the input, parameter or node, never a wrap ----

TEST(Limits, InputDimsOverflowingInt64AreAShapeErrorNamingTheInput) {
  std::string src = "model big(x: f32[999999999999, 999999999999, 999999999999]) {\n  return relu(x)\n}\n";
  expectExactError<ShapeError>([&] { trace(parseModel(src, "big.fbx")); },
                          {"big.fbx:1:14:", "input 'x'", "f32[999999999999, 999999999999, 999999999999]", "int64"});
  std::string param = "model big(x: f32[2]) {\n  scope fc {\n    param w: f32[4294967296, 4294967296] = zeros\n  }\n  return x\n}\n";
  expectExactError<ShapeError>([&] { trace(parseModel(param, "big.fbx")); }, {"big.fbx:3:14:", "parameter 'fc.w'"});
}

TEST(Limits, AnOpResultOverflowingInt64IsAShapeErrorAtTheOp) {
  // each operand fits (6e9 elements), the product of the matmul does not (3037000500^2 > 2^63)
  std::string src = "model big(a: f32[3037000500, 2], b: f32[2, 3037000500]) {\n  h = matmul(a, b)\n  return h\n}\n";
  expectExactError<ShapeError>([&] { trace(parseModel(src, "big.fbx")); }, {"big.fbx:2:7:", "matmul", "more elements than int64"});
}

// A zero-size tensor has no elements, but its strides are products of its other dims: beside a zero
// dim they must still fit (fuzz.compiler found [0, 1e11, 1e11] overflowing Layout::contiguous).
TEST(Limits, ZeroSizeTensorsWhoseOtherDimsOverflowAreAShapeError) {
  std::string src = "model big(x: f32[0, 100000000000, 100000000000]) {\n  return relu(x)\n}\n";
  expectExactError<ShapeError>([&] { trace(parseModel(src, "big.fbx")); },
                               {"big.fbx:1:14:", "input 'x'", "beside a zero dim"});
  std::string fits = "model ok(x: f32[0, 100000, 7]) {\n  return relu(x) * 2.0\n}\n";
  EXPECT_NO_THROW(trace(parseModel(fits, "ok.fbx")));
}

TEST(Limits, SymbolicSizeArithmeticOverflowIsAShapeErrorAtTheOperator) {
  std::string src = "model big(x: f32[B]) dims(B = 4) {\n  return reshape(x, [B * B * 4294967296 * 4294967296])\n}\n";
  TraceOptions o;
  o.symbolic = true;
  expectExactError<ShapeError>([&] { trace(parseModel(src, "big.fbx"), o); }, {"big.fbx:2:", "overflows int64"});
  std::string folded = "model big(x: f32[2, 3]) {\n  return sum(x, dim=999999999999999999 * 100)\n}\n";
  expectExactError<ShapeError>([&] { trace(parseModel(folded, "big.fbx")); }, {"big.fbx:2:", "out of the int64 range"});
}

TEST(Limits, WindowAttributesOverflowingInt64AreAShapeError) {
  std::string src = "model big(x: f32[1, 1, 8, 8]) {\n  param w: f32[1, 1, 2, 2] = zeros\n"
                    "  return conv2d(x, w, padding=[999999999999999999 * 5])\n}\n";
  expectExactError<ShapeError>([&] { trace(parseModel(src, "big.fbx")); }, {"big.fbx:3:10:", "conv2d", "overflows int64"});
}

// ---- memory budget: a LimitError before the allocation, naming the value, node and sizes ----

TEST(Limits, HugeDimOfABuiltinModelIsALimitErrorNamingTheInput) {
  TraceOptions o;
  o.dims["B"] = 99999999999;  // fusebox run mlp --dim B=99999999999
  Graph g = trace(loadModel("mlp"), o);  // a graph is only sizes: fine
  expectExactError<LimitError>([&] { makeInputs(g, 0); }, {"input 'x'", "f32[99999999999, 784]", "over the memory budget", "--max-memory"});
}

TEST(Limits, AnIntermediateOverTheBudgetIsALimitErrorNamingTheNode) {
  BudgetScope budget(int64_t{1} << 20);  // 1 MB
  Graph g = trace(parseModel("model big(a: f32[1000, 1], b: f32[1, 1000]) {\n  h = a * b\n  return relu(h)\n}\n", "big.fbx"));
  std::vector<Tensor> in = makeInputs(g, 0);  // 16 KB
  expectExactError<LimitError>([&] { interpret(g, in); },
                          {"big.fbx:2:9: node 'h' (mul) needs 7.6 MB for f32[1000, 1000]", "over the memory budget of 1.0 MB (--max-memory)"});
}

TEST(Limits, ParametersCountAgainstTheBudgetAsTheyAreMade) {
  BudgetScope budget(int64_t{1} << 20);
  Graph g = trace(parseModel("model big(x: f32[4]) {\n  param w: f32[100000, 4] = randn(seed=1)\n  return x\n}\n", "big.fbx"));
  expectExactError<LimitError>([&] { makeInputs(g, 0); }, {"parameter 'w' needs 3.1 MB for f32[100000, 4]", "1.0 MB"});
}

TEST(Limits, ByteSizesParseAndPrint) {
  EXPECT_EQ(parseByteSize("12G"), int64_t{12} << 30);
  EXPECT_EQ(parseByteSize("512mb"), int64_t{512} << 20);
  EXPECT_EQ(parseByteSize("1.5GiB"), int64_t{3} << 29);
  EXPECT_EQ(parseByteSize("100000"), 100000);
  EXPECT_FALSE(parseByteSize("lots"));
  EXPECT_FALSE(parseByteSize("0"));
  EXPECT_FALSE(parseByteSize("-1G"));
  EXPECT_FALSE(parseByteSize("99999999999T"));
  EXPECT_EQ(formatBytes(100LL * 1000 * 1000 * 1000), "93.1 GB");
  EXPECT_EQ(formatBytes(312), "312 bytes");
  EXPECT_GT(defaultMemoryBudget(), 0);
}

// ---- model paths: only regular files, of bounded size; nothing blocks ----

TEST(Limits, AFifoAsModelPathIsRefusedWithoutBlocking) {
  TempDir dir;
  std::string fifo = (dir.path / "pipe.fbx").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expectExactError<Error>([&] { loadModel(fifo); }, {"pipe.fbx", "is a FIFO", "not a regular file"});
  std::string onnx = (dir.path / "pipe.onnx").string();
  ASSERT_EQ(::mkfifo(onnx.c_str(), 0600), 0);
  expectExactError<Error>([&] { readModelFile(onnx); }, {"pipe.onnx", "is a FIFO"});
}

TEST(Limits, DevicesAndDirectoriesAsModelPathAreRefused) {
  expectExactError<Error>([&] { loadModel("/dev/zero"); }, {"'/dev/zero' is a character device", "not a regular file"});
  TempDir dir;
  expectExactError<Error>([&] { loadModel(dir.path.string()); }, {"is a directory"});
  expectExactError<Error>([&] { loadModel((dir.path / "missing.fbx").string()); }, {"cannot open model file", "missing.fbx"});
}

TEST(Limits, AModelFileOverTheSizeLimitIsALimitError) {
  TempDir dir;
  std::string big = (dir.path / "big.fbx").string();
  { std::ofstream(big) << "model m() {}"; }
  fs::resize_file(big, kMaxModelFileBytes + 1);  // sparse: no disk space used
  expectExactError<LimitError>([&] { loadModel(big); }, {"big.fbx", "is 2147483649 bytes, over the limit of 2.0 GB"});
  std::string small = (dir.path / "small.fbx").string();
  { std::ofstream(small) << repeat("#", 200); }
  expectExactError<LimitError>([&] { readModelFile(small, 100); }, {"small.fbx", "over the limit of 100 bytes"});
}

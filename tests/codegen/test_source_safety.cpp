// Generated source and untrusted models: model text reaches generated C++/CUDA only as escaped
// comments and sanitized identifiers; the JIT reads no file and calls nothing but math and BLAS;
// a data-dependent index outside its dimension is an error naming the node, never a stray access.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "core/codegen/cpu/cpu_prelude.h"
#include "core/codegen/cpu/jit_compiler.h"
#include "core/codegen/cuda/cuda_codegen.h"
#include "core/codegen/source_text.h"
#include "core/frontend/model_loader.h"
#include "core/frontend/onnx/onnx_loader.h"
#include "core/runtime/model_runner.h"
#include "cpu_check.h"
#include "frontend/onnx_builder.h"
#include "test_util.h"

using namespace fusebox;
namespace fs = std::filesystem;

namespace {

// Names an attacker would pick: newlines that end a `//` comment, a backslash that splices the
// next line, `*/`, trigraph-like `??/`, an #include of a host file, a call into libc, non-ASCII.
const std::vector<std::string> kHostile = {
    "x\n#include \"/etc/passwd\"\nHOSTILE_A",
    "w\nint HOSTILE_B = system(\"touch /tmp/fusebox_pwned\");//",
    "b */ HOSTILE_C /* \\",
    "table??/\nHOSTILE_D\r\x01\xff",
    "y.HOSTILE_E",
    "y_HOSTILE_E",  // sanitizes to the same text as the name above
};

std::vector<float> seeded(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>((static_cast<int>(i * 37 % 11) - 5)) / 5.0f;
  return v;
}

// out = relu(x @ w + b) + sum(gather(table, ids)), every name hostile; written to a file whose
// name is hostile too.
std::string writeHostileModel() {
  proto::ModelProto m = test::onnxModel();
  proto::GraphProto& g = m.graph;
  g.name = "graph\n#include \"/etc/shadow\"\nHOSTILE_G";
  g.inputs = {test::onnxTensorInfo(kHostile[0], proto::FLOAT, {3, 5}), test::onnxTensorInfo(kHostile[3], proto::INT64, {3})};
  g.initializers = {test::onnxFloats(kHostile[1], {5, 7}, seeded(35, 0.5f)), test::onnxFloats(kHostile[2], {7}, seeded(7, 0.1f)),
                    test::onnxFloats(kHostile[4], {11, 7}, seeded(77, 1.0f))};
  test::addOnnxNode(g, "MatMul", {kHostile[0], kHostile[1]}, {"mm\nHOSTILE_V"}, "n1\nHOSTILE_N");
  test::addOnnxNode(g, "Add", {"mm\nHOSTILE_V", kHostile[2]}, {"add */ HOSTILE_W"}, "n2");
  test::addOnnxNode(g, "Relu", {"add */ HOSTILE_W"}, {kHostile[5]}, "n3");
  test::addOnnxNode(g, "Gather", {kHostile[4], kHostile[3]}, {"gathered\\"}, "n4").attributes.push_back(test::onnxIntAttr("axis", 0));
  test::addOnnxNode(g, "Add", {kHostile[5], "gathered\\"}, {"out\nHOSTILE_O"}, "n5");
  g.outputs.push_back(test::onnxTensorInfo("out\nHOSTILE_O", proto::FLOAT, {}));
  std::string path = (fs::temp_directory_path() / ("fusebox_" + std::to_string(::getpid()) + "_evil\n#include \"x\"\\.onnx")).string();
  test::writeOnnx(path, m);
  return path;
}

// Every line of `source`: model text may appear only after `//`, and there as escaped text.
void expectNoModelTextOutsideComments(const std::string& source, const std::string& what) {
  std::istringstream in(source);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    size_t comment = line.find("//");
    std::string code = line.substr(0, comment);
    // Outside comments a model name survives only as a buffer identifier: [A-Za-z0-9_], "b_" prefix.
    static const std::regex word("[A-Za-z0-9_]*HOSTILE[A-Za-z0-9_]*");
    for (auto it = std::sregex_iterator(code.begin(), code.end(), word); it != std::sregex_iterator(); ++it) {
      std::string id = it->str();
      bool buffer = id.rfind("b_", 0) == 0 || id.rfind("acc_b_", 0) == 0 || id.rfind("rowacc_b_", 0) == 0 ||
                    id.rfind("rowsum_b_", 0) == 0 || id.rfind("part_b_", 0) == 0;
      EXPECT_TRUE(buffer) << what << " line " << number << ": " << line;
      size_t start = it->position();
      EXPECT_TRUE(start == 0 || (code[start - 1] != '"' && code[start - 1] != '#')) << what << " line " << number << ": " << line;
    }
    EXPECT_EQ(line.find('\r'), std::string::npos) << what << " line " << number;
    EXPECT_EQ(code.find("#include"), std::string::npos) << what << " line " << number << ": " << line;
    EXPECT_EQ(code.find("system"), std::string::npos) << what << " line " << number << ": " << line;
    if (comment != std::string::npos) {
      std::string text = line.substr(comment);
      if (text.find("HOSTILE") == std::string::npos) continue;
      EXPECT_EQ(text.find("*/"), std::string::npos) << what << " line " << number << ": " << line;
      EXPECT_NE(text.back(), '\\') << what << " line " << number << ": " << line;
      for (char c : text) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << what << " line " << number << ": " << line;
    }
  }
}

}  // namespace

TEST(SourceText, CommentTextEscapesWhatCouldEndOrSpliceAComment) {
  EXPECT_EQ(commentText("fc1.weight"), "fc1.weight");
  EXPECT_EQ(commentText("a\nb"), "a\\x0ab");
  EXPECT_EQ(commentText("a*/b"), "a\\x2a/b");
  EXPECT_EQ(commentText("a\\"), "a\\x5c");
  EXPECT_EQ(commentText("??/"), "\\x3f\\x3f/");
  EXPECT_EQ(commentText("\xff\x01"), "\\xff\\x01");
  EXPECT_EQ(commentText(std::string(1000, 'a'), 10), std::string(10, 'a') + "...");
}

TEST(SourceText, IdentifiersAreUniqueWordCharactersOfBoundedLength) {
  IdentifierTable ids({"fc1.weight", "fc1_weight", "fc1 weight", "x\ny", std::string(500, 'z'), "b_fc1_weight_2"}, "b_");
  EXPECT_EQ(ids("fc1.weight"), "b_fc1_weight");
  EXPECT_EQ(ids("fc1_weight"), "b_fc1_weight_2");
  EXPECT_EQ(ids("fc1 weight"), "b_fc1_weight_3");
  EXPECT_EQ(ids("b_fc1_weight_2"), "b_b_fc1_weight_2");
  EXPECT_EQ(ids("x\ny"), "b_x_y");
  EXPECT_LE(ids(std::string(500, 'z')).size(), IdentifierTable::kMaxIdentifier);
  std::set<std::string> distinct;
  for (const char* n : {"fc1.weight", "fc1_weight", "fc1 weight", "x\ny", "b_fc1_weight_2"}) distinct.insert(ids(n));
  EXPECT_EQ(distinct.size(), 5u);
  EXPECT_THROW(ids("unknown"), Error);
}

// The printers check their own output; the check itself must catch each way text could escape.
TEST(SourceText, GeneratedSourceProblemFindsTextOutsideComments) {
  const std::string prelude = "#define P 1\n// ---- end of prelude\n";
  EXPECT_EQ(generatedSourceProblem("// header x\n" + prelude + "float t0 = __builtin_nanf(\"\"); // fine\n", prelude), "");
  for (const char* bad : {"// a\n#include \"/etc/passwd\"\n", "int x = system(\"ls\");\n", "// ok \\\nint y;\n",
                          "// a */ b\n", "// a ??/\n", "int \xff;\n", "char c = 'x';\n"})
    EXPECT_NE(generatedSourceProblem(prelude + bad, prelude), "") << bad;
  EXPECT_NE(generatedSourceProblem("int main() {}\n", prelude), "");
}

// The adversarial model: generated C++ and CUDA carry no model text outside escaped comments,
// and the C++ compiles and computes what the interpreter computes, in inference and training.
TEST(SourceSafety, HostileNamesNeverReachGeneratedCode) {
  std::string path = writeHostileModel();
  for (bool train : {false, true}) {
    PipelineConfig cfg;
    cfg.train = train;
    Pipeline p(loadModel(path), cfg);
    p.runAll();
    for (size_t i = 0; i < p.modules().size(); ++i) {
      expectNoModelTextOutsideComments(p.modules("cpu")[i].source, "C++ " + p.graphName(i));
      expectNoModelTextOutsideComments(p.modules("cuda")[i].source, "CUDA " + p.graphName(i));
    }
    if (!cpuJitAvailable()) continue;
    test::expectCpuMatchesInterpreter(p, 1, 3, 1, train ? "train" : "infer");
  }
  fs::remove(path);
}

TEST(SourceSafety, TheJitReadsNoFileAndQuotesOnlyGeneratedSource) {
  if (!cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  std::string secret = (fs::temp_directory_path() / ("fusebox_secret_" + std::to_string(::getpid()))).string();
  std::ofstream(secret) << "SECRET_LINE_1 garbage that is not C++ @@@\n";
  try {
    compileCpuModule("#include \"" + secret + "\"\nextern \"C\" void fusebox_main() {}\n");
    ADD_FAILURE() << "an #include of a host file compiled";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("SECRET_LINE_1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not found"), std::string::npos) << e.what();
  }
  fs::remove(secret);
}

TEST(SourceSafety, GeneratedCodeCannotCallIntoTheProcess) {
  if (!cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  test::expectThrowContaining<Error>(
      [] {
        compileCpuModule(std::string(cpuPrelude()) + "extern \"C\" int system(const char*);\nextern \"C\" fb_i64 fusebox_fault[3];\n"
                         "extern \"C\" void fusebox_main(const FuseboxRuntime*, void* const*) { system(\"true\"); }\n");
      },
      "calls 'system'");
}

// A cross-entropy whose labels run past the class count: the gather's index check reports the
// node (its op and source line) instead of reading past the logits.
TEST(IndexChecks, AnOutOfRangeGatherIndexIsAnErrorNamingTheNode) {
  if (!cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  const std::string src =
      "model m(y: i64[4] range(100, 200)) {\n"
      "  param x: f32[4, 7] = randn(seed=2)\n"
      "  return cross_entropy(x, y)\n"
      "}\n";
  for (bool train : {false, true}) {
    PipelineConfig cfg;
    cfg.train = train;
    Pipeline p(parseModel(src, "labels.fbx"), cfg);
    p.runAll();
    test::expectThrowContaining<Error>([&] { runOnCpu(p, 1, 1, 2, false); }, "out of range for a dimension of size 7");
    test::expectThrowContaining<Error>([&] { runOnCpu(p, 1, 1, 2, false); }, "labels.fbx:3:");
  }
}

TEST(IndexChecks, AnEmbeddingIndexPastTheTableIsAnError) {
  if (!cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  const std::string src =
      "model m(ids: i64[5] range(0, 40)) {\n"
      "  param table: f32[13, 3] = randn(seed=1)\n"
      "  return sum(embedding(ids, table))\n"
      "}\n";
  Pipeline p(parseModel(src, "emb.fbx"), {});
  p.runAll();
  test::expectThrowContaining<Error>([&] { runOnCpu(p, 1, 1, 2, false); }, "size 13");
}

// The embedding gradient's scatter-add (an extern) checks its indices before writing anything.
TEST(IndexChecks, IndexAddRefusesAnOutOfRangeRowAndWritesNothingOutside) {
  if (!cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  auto m = compileCpuModule(std::string(cpuPrelude()) +
                            "extern \"C\" void fusebox_main(const FuseboxRuntime*, void* const* bufs) {\n"
                            "  fb_index_add((const float*)bufs[0], (const fb_i64*)bufs[1], (const float*)bufs[2], (float*)bufs[3], 1, 4, 3, 2, 41);\n"
                            "}\n");
  std::vector<float> x(8, 1.0f), src(6, 2.0f), out(8 + 64, -7.0f);
  std::vector<int64_t> index = {0, 9, 1};
  void* bufs[] = {x.data(), index.data(), src.data(), out.data()};
  reinterpret_cast<void (*)(const void*, void* const*)>(m->entry)(nullptr, bufs);
  ASSERT_NE(m->fault, nullptr);
  EXPECT_EQ(m->fault[0], 42);
  EXPECT_EQ(m->fault[1], 9);
  EXPECT_EQ(m->fault[2], 4);
  m->fault[0] = m->fault[1] = m->fault[2] = 0;
  for (size_t i = 8; i < out.size(); ++i) EXPECT_EQ(out[i], -7.0f) << "written past the output at " << i;
}

// Training an embedding with in-range ids still matches the interpreter (the checks cost nothing
// in results), at sizes that are not multiples of the vector width; also a gather of a gather
// (cross_entropy straight on an embedding), whose two coordinates once shared one name.
class InRangeIndices : public ::testing::TestWithParam<std::string> {};

TEST_P(InRangeIndices, StillMatchTheInterpreter) {
  if (!cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  const std::string src =
      "model m(ids: i64[7] range(0, 13), y: i64[7] range(0, 5)) {\n"
      "  param table: f32[13, " + std::string(GetParam() == "nested" ? "5" : "6") + "] = randn(seed=1)\n"
      "  param w: f32[5, 6] = randn(seed=2)\n" +
      (GetParam() == "nested" ? "  return cross_entropy(embedding(ids, table), y)\n"
                              : "  return cross_entropy(linear(embedding(ids, table), w), y)\n") +
      "}\n";
  for (bool train : {false, true}) {
    PipelineConfig cfg;
    cfg.train = train;
    Pipeline p(parseModel(src, "emb.fbx"), cfg);
    p.runAll();
    test::expectCpuMatchesInterpreter(p, 2, 5, 2, train ? "train" : "infer");
  }
}

INSTANTIATE_TEST_SUITE_P(Embedding, InRangeIndices, ::testing::Values("linear", "nested"));

// cat (and the zero padding of slice's gradient) select between inputs by position; a branch's
// load is out of its buffer where the other branch is chosen, so generated code reads it only
// where chosen (an if/else instead of computing both sides), and still matches the interpreter.
TEST(GuardedReads, CatReadsEachInputOnlyWhereItIsChosen) {
  if (!cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  const std::string src =
      "model m(a: f32[3, 1]) {\n"
      "  param b: f32[3, 5] = randn(seed=1)\n"
      "  param c: f32[3, 7] = randn(seed=2)\n"
      "  h = cat([relu(a), b * 2.0, c], 1)\n"
      "  return sum(tanh(slice(h, 1, 2, 11)) * 1.5)\n"
      "}\n";
  for (bool train : {false, true}) {
    PipelineConfig cfg;
    cfg.train = train;
    Pipeline p(parseModel(src, "cat.fbx"), cfg);
    p.runAll();
    EXPECT_NE(p.modules()[0].source.find("} else {"), std::string::npos) << "cat's inputs are read unconditionally";
    test::expectCpuMatchesInterpreter(p, 2, 3, 2, train ? "train" : "infer");
  }
}

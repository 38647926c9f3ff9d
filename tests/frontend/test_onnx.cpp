// ONNX import: a case from ONNX's own backend tests computes its expected output in the
// reference interpreter; unsupported ops name the node, op type and opset; truncated and
// bit-flipped files give errors, never crashes.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>

#include "core/frontend/model_loader.h"
#include "core/frontend/onnx/onnx_loader.h"
#include "core/frontend/onnx/onnx_scope.h"
#include "core/frontend/onnx/onnx_test_data.h"
#include "core/interp/interpreter.h"
#include "core/runtime/model_runner.h"
#include "frontend/onnx_builder.h"
#include "test_util.h"

using namespace fusebox;
namespace fs = std::filesystem;

namespace {

const fs::path kData = "/usr/share/libonnx-testdata/data";

std::string tempFile(const std::string& name, const std::string& bytes) {
  std::string path = (fs::temp_directory_path() / ("fusebox_onnx_" + std::to_string(::getpid()) + "_" + name)).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// An opset-17 model whose one input is f32 'x' of `dims`: tests add initializers, nodes, outputs.
proto::ModelProto modelWithInput(const std::vector<int64_t>& dims) {
  proto::ModelProto m = test::onnxModel();
  m.graph.inputs.push_back(test::onnxTensorInfo("x", proto::FLOAT, dims));
  return m;
}

std::string tempModel(const std::string& name, const proto::ModelProto& m) { return tempFile(name, proto::serialize(m)); }

void expectMatchesCase(const OnnxModel& m, const fs::path& set) {
  std::vector<Tensor> got = interpret(m.graph, onnxDataSetInputs(m, set.string()));
  Tensor want = loadOnnxTensor((set / "output_0.pb").string());
  ASSERT_EQ(got.at(0).numel(), want.numel());
  got[0].sizes = want.sizes;
  EXPECT_TRUE(closeForDType(got[0], want)) << "max abs diff " << compareTensors(got[0], want).maxAbs;
}

}  // namespace

class OnnxCase : public ::testing::TestWithParam<std::string> {};

// Graph import checked on its own (no codegen): the interpreter reproduces ONNX's expected outputs.
TEST_P(OnnxCase, InterpreterMatchesTheExpectedOutput) {
  fs::path dir = kData / GetParam();
  if (!fs::exists(dir)) GTEST_SKIP() << "no libonnx-testdata";
  expectMatchesCase(loadOnnx((dir / "model.onnx").string()), dir / "test_data_set_0");
}

// Inputs that decide shapes (pads, repeats, an axis, split sizes, resize scales) cannot be run-time
// values; bound at import they specialize the graph, which then computes the case's expected output.
class OnnxBoundCase : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxBoundCase, BoundInputsSpecializeTheGraph) {
  fs::path dir = kData / GetParam();
  if (!fs::exists(dir)) GTEST_SKIP() << "no libonnx-testdata";
  std::string model = (dir / "model.onnx").string();
  test::expectThrowContaining<Error>([&] { loadOnnx(model); }, "computed at run time is not supported");
  fs::path set = dir / "test_data_set_0";
  OnnxBindings bind;
  OnnxModel m = loadOnnxSpecialized(model, set.string(), &bind);
  ASSERT_FALSE(bind.empty());
  for (const GraphInput& gi : m.graph.inputs()) EXPECT_FALSE(bind.count(m.graph.value(gi.value).name)) << "a bound input stayed an input";
  expectMatchesCase(m, set);
}

INSTANTIATE_TEST_SUITE_P(Backend, OnnxBoundCase,
                         ::testing::Values("node/test_reflect_pad", "node/test_edge_pad", "node/test_tile", "node/test_cumsum_1d_reverse_exclusive",
                                           "node/test_split_variable_parts_2d", "node/test_reshape_negative_dim", "node/test_slice_neg",
                                           "node/test_expand_dim_changed",
                                           "node/test_resize_upsample_scales_linear", "node/test_resize_downsample_scales_cubic"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& ch : s)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

INSTANTIATE_TEST_SUITE_P(Backend, OnnxCase,
                         ::testing::Values("node/test_relu", "node/test_softmax_axis_1", "node/test_gemm_default_matrix_bias",
                                           "node/test_conv_with_strides_padding", "node/test_batchnorm_example",
                                           "pytorch-converted/test_Linear", "pytorch-converted/test_Conv2d_groups",
                                           "node/test_maxpool_2d_strides",
                                           // compositions and import-time constants
                                           "node/test_sce_mean_weight_ii_3d_expanded", "node/test_nllloss_NCd1d2_with_weight_reduction_mean",
                                           "node/test_layer_normalization_3d_axis1_epsilon_expanded", "node/test_argmax_negative_axis_keepdims_random_select_last_index",
                                           "node/test_averagepool_2d_ceil", "node/test_averagepool_2d_pads", "node/test_maxpool_2d_same_lower",
                                           "node/test_triu_one_row", "node/test_gather_2d_indices", "node/test_gather_elements_negative_indices", "node/test_mod_mixed_sign_float32",
                                           "node/test_conv_with_strides_and_asymmetric_padding", "node/test_depthtospace_crd_mode_example",
                                           "node/test_reduce_log_sum_exp_keepdims_random", "node/test_round", "node/test_acos", "node/test_split_equal_parts_2d",
                                           "node/test_gather_negative_indices", "node/test_hardmax_axis_1"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& ch : s)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

TEST(OnnxLoader, UnsupportedOpNamesTheNodeOpTypeAndOpset) {
  proto::ModelProto m = modelWithInput({4});
  test::addOnnxNode(m.graph, "Relu", {"x"}, {"r"});
  test::addOnnxNode(m.graph, "TfIdfVectorizer", {"r"}, {"y"}, "head");
  m.graph.outputs.push_back(test::onnxName("y"));
  std::string path = tempModel("unsupported.onnx", m);
  test::expectThrowContaining<Error>([&] { loadOnnx(path); }, "node 1 'head' (TfIdfVectorizer, opset 17): unsupported op type 'TfIdfVectorizer'");
  fs::remove(path);
}

// Found by fuzz.onnx_loader: a Pad (opset 11+) without its pads input read past the node's input
// list (ASan heap-buffer-overflow); Range and OneHot read their constant inputs the same way.
TEST(OnnxLoader, AMissingConstantInputIsAnErrorNamingIt) {
  for (const char* op : {"Pad", "OneHot"}) {
    proto::ModelProto m = modelWithInput({4});
    test::addOnnxNode(m.graph, op, {"x"}, {"y"});
    m.graph.outputs.push_back(test::onnxName("y"));
    std::string path = tempModel("missing_input.onnx", m);
    test::expectThrowContaining<Error>([&] { loadOnnx(path); }, "is required");
    fs::remove(path);
  }
}

// Found by fuzz.onnx_loader: an InstanceNormalization of a rank-1 input wrote past the sizes of its
// scale's [1, C, ...] reshape (ASan heap-buffer-overflow); a scale that is not [C] is an error too.
TEST(OnnxLoader, InstanceNormalizationChecksItsRankAndChannelParams) {
  auto load = [](const std::vector<int64_t>& dims, int64_t scaleSize) {
    proto::ModelProto m = modelWithInput(dims);
    std::vector<float> values;
    for (int64_t i = 0; i < scaleSize; ++i) values.push_back(0.5f + static_cast<float>(i));
    for (const char* name : {"scale", "bias"}) m.graph.initializers.push_back(test::onnxFloats(name, {scaleSize}, values));
    test::addOnnxNode(m.graph, "InstanceNormalization", {"x", "scale", "bias"}, {"y"});
    m.graph.outputs.push_back(test::onnxName("y"));
    std::string path = tempModel("instance_norm.onnx", m);
    OnnxModel model = loadOnnx(path);
    fs::remove(path);
    return model;
  };
  test::expectThrowContaining<Error>([&] { load({4}, 4); }, "InstanceNormalization needs [N, C, spatial...]");
  test::expectThrowContaining<Error>([&] { load({2, 3, 5}, 4); }, "a per-channel input must be [3], not [4]");
  OnnxModel ok = load({2, 3, 5}, 3);
  std::vector<double> xs(30);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-2, 2);
  for (double& v : xs) v = u(rng);
  Tensor x(DType::F32, {2, 3, 5}, xs);
  Tensor param(DType::F32, {3}, {0.5, 1.5, 2.5});  // the initializers' values, graph inputs after x
  std::vector<Tensor> y = interpret(ok.graph, {x, param, param});
  ASSERT_EQ(y.at(0).sizes, (std::vector<int64_t>{2, 3, 5}));
  // Channel 1 of sample 0 (elements 5..9), normalized over its 5 values, times scale 1.5 plus bias 1.5.
  double mean = 0, var = 0;
  for (int i = 5; i < 10; ++i) mean += xs[i] / 5;
  for (int i = 5; i < 10; ++i) var += (xs[i] - mean) * (xs[i] - mean) / 5;
  for (int i = 5; i < 10; ++i) EXPECT_NEAR(y[0].data[i], (xs[i] - mean) / std::sqrt(var + 1e-5) * 1.5 + 1.5, 1e-4);
}

TEST(OnnxLoader, TruncatedAndBitFlippedFilesGiveErrorsNotCrashes) {
  fs::path model = kData / "pytorch-converted/test_Conv2d/model.onnx";
  if (!fs::exists(model)) GTEST_SKIP();
  std::ifstream f(model, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  test::expectThrowContaining<Error>([&] { loadOnnx(tempFile("empty.onnx", "")); }, "not a valid ONNX model");
  std::mt19937 rng(11);
  int errors = 0, loaded = 0;
  for (int i = 0; i < 200; ++i) {
    std::string b = bytes;
    if (i % 2) b.resize(rng() % b.size());
    else
      for (int k = 0; k < 4; ++k) b[rng() % b.size()] ^= static_cast<char>(1 << (rng() % 8));
    std::string path = tempFile("mutated.onnx", b);
    try {
      OnnxModel m = loadOnnx(path);
      ++loaded;  // a flip in a weight's bytes still loads
    } catch (const Error& e) {
      ++errors;
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
    fs::remove(path);
  }
  EXPECT_GT(errors, 50);
  std::printf("mutated models: %d rejected with an error, %d still loaded\n", errors, loaded);
}

namespace {

// A model whose one input has `dims` and whose one initializer claims `initDims` (no data).
std::string sizedModel(const std::vector<int64_t>& dims, const std::vector<int64_t>& initDims) {
  proto::ModelProto m = modelWithInput(dims);
  if (!initDims.empty()) {
    proto::TensorProto& w = m.graph.initializers.emplace_back();
    w.name = "w";
    w.dataType = proto::UINT8;
    w.dims = initDims;
  }
  test::addOnnxNode(m.graph, "Relu", {"x"}, {"y"});
  m.graph.outputs.push_back(test::onnxName("y"));
  return proto::serialize(m);
}

}  // namespace

TEST(OnnxLoader, AHugeDimProductIsAnErrorNamingTheInput) {
  // each dim is allowed (< 2^31), their product (2^60) is not
  std::string path = tempFile("huge_dims.onnx", sizedModel({1 << 20, 1 << 20, 1 << 20}, {}));
  test::expectExactError<Error>([&] { loadOnnx(path); }, {"huge_dims.onnx", "input 'x'", "[1048576, 1048576, 1048576]", "more than 2^31 elements"});
  fs::remove(path);
}

TEST(OnnxLoader, InitializerDimsOverflowingInt64AreAnError) {
  std::string path = tempFile("huge_init.onnx", sizedModel({4}, {int64_t{1} << 40, int64_t{1} << 40}));
  test::expectExactError<Error>([&] { loadOnnx(path); }, {"huge_init.onnx: initializer: tensor 'w' has dims that are negative or too large"});
  fs::remove(path);
}

TEST(OnnxLoader, AnInitializerOverTheMemoryBudgetIsALimitErrorBeforeAllocation) {
  test::BudgetScope budget(int64_t{1} << 20);
  // 2^30 one-byte elements claimed: 8 GB as doubles, over a 1 MB budget, refused before any allocation
  std::string path = tempFile("big_init.onnx", sizedModel({4}, {int64_t{1} << 30}));
  test::expectExactError<LimitError>([&] { loadOnnx(path); },
                                     {"big_init.onnx: initializer: tensor 'w' needs 8.0 GB for i32[1073741824] at import", "1.0 MB (--max-memory)"});
  fs::remove(path);
}

TEST(OnnxLoader, AFifoAsModelPathIsRefusedWithoutBlocking) {
  std::string path = (fs::temp_directory_path() / ("fusebox_onnx_" + std::to_string(::getpid()) + "_pipe.onnx")).string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  test::expectExactError<Error>([&] { loadModel(path); }, {"pipe.onnx", "is a FIFO"});
  test::expectExactError<Error>([&] { loadOnnx("/dev/zero"); }, {"/dev/zero", "character device"});
  fs::remove(path);
}

TEST(OnnxLoader, ConstantsAddUpAgainstTheMemoryBudget) {
  // two initializers of 64 K elements (512 KB each as doubles): each fits a 768 KB budget, both do not
  proto::ModelProto m = test::onnxModel();
  for (const char* name : {"a", "b"}) {
    proto::TensorProto& w = m.graph.initializers.emplace_back();
    w.name = name;
    w.dataType = proto::UINT8;
    w.dims = {1 << 16};
    w.rawData = std::string(1 << 16, '\1');
  }
  test::addOnnxNode(m.graph, "Add", {"a", "b"}, {"y"});
  m.graph.outputs.push_back(test::onnxName("y"));
  std::string path = tempModel("two_inits.onnx", m);
  test::BudgetScope budget(768 << 10);
  test::expectExactError<LimitError>([&] { loadOnnx(path); },
                                     {"two_inits.onnx: initializer: constant 'b' needs 512.0 KB for i32[65536] at import (with 512.0 KB already in use)",
                                      "over the memory budget of 768.0 KB"});
  fs::remove(path);
}

// Module scopes from what the PyTorch exporters write: the TorchScript exporter's node names
// ("/layer2/layer2.0/conv1/Conv"), the dynamo exporter's name_scopes metadata (NodeProto field 9,
// ONNX 1.16), hostile text made safe.
TEST(OnnxLoader, NodeScopesComeFromTheExportersNamesAndMetadata) {
  EXPECT_EQ(onnxNodeScope("/layer2/layer2.0/conv1/Conv", {}), "layer2.0.conv1");
  EXPECT_EQ(onnxNodeScope("/layer2/layer2.0/downsample/downsample.0/Conv", {}), "layer2.0.downsample.0");
  EXPECT_EQ(onnxNodeScope("/m/transformer/h.0/attn/c_attn/Gemm", {}), "m.transformer.h.0.attn.c_attn");
  EXPECT_EQ(onnxNodeScope("/features/features.1/conv/conv.0/conv.0.0/Conv", {}), "features.1.conv.0.0");
  EXPECT_EQ(onnxNodeScope("/Relu", {}), "");
  EXPECT_EQ(onnxNodeScope("node_conv2d", {}), "");
  EXPECT_EQ(onnxNodeScope("node_conv2d", {{"pkg.torch.onnx.name_scopes", "['', 'layer2', 'layer2.0', 'layer2.0.conv1', 'conv2d']"}}),
            "layer2.0.conv1");
  EXPECT_EQ(onnxNodeScope("/a<b>/\"x\"/Conv", {}), "a_b_._x_");
  EXPECT_EQ(onnxNodeScope("/" + std::string(5000, 'm') + "/Conv", {}).size(), kMaxScopeLength);
  proto::ModelProto m = modelWithInput({4});
  test::addOnnxNode(m.graph, "Relu", {"x"}, {"r"}, "/layer2/layer2.0/relu/Relu");
  // NodeProto.metadata_props (field 9), as torch 2.11 writes it
  test::addOnnxNode(m.graph, "Neg", {"r"}, {"y"}, "node_neg").metadata = {{"pkg.torch.onnx.name_scopes", "['', 'head', 'head.act', 'neg']"}};
  m.graph.outputs.push_back(test::onnxName("y"));
  std::string path = tempModel("scopes.onnx", m);
  OnnxModel loaded = loadOnnx(path);
  std::vector<std::string> got;
  for (const Node& n : loaded.graph.nodes()) got.push_back(n.scope);
  EXPECT_EQ(got, (std::vector<std::string>{"layer2.0.relu", "head.act"}));
  fs::remove(path);
}

// Parameters the TorchScript exporter named itself ("onnx::Gemm_7", a weight it folded) are named
// by their reader's module path, as PyTorch names them; readers in two scopes keep the old name.
TEST(OnnxLoader, ParamsAreNamedByTheirModulePath) {
  EXPECT_EQ(moduleParamName({{"layer2.0.conv1", "Conv", 1}}), "layer2.0.conv1.weight");
  EXPECT_EQ(moduleParamName({{"fc", "Gemm", 2}}), "fc.bias");
  EXPECT_EQ(moduleParamName({{"a", "Conv", 1}, {"b", "Conv", 1}}), "");  // shared by two modules
  EXPECT_EQ(moduleParamName({{"", "Conv", 1}}), "");                     // no scope to name it by
  EXPECT_EQ(moduleParamName({{"a", "Relu", 0}}), "");                    // no known role
  EXPECT_TRUE(isGeneratedParamName("onnx::Conv_208"));
  EXPECT_FALSE(isGeneratedParamName("layer1.0.conv1.weight"));
  proto::ModelProto m = modelWithInput({2, 3});
  proto::GraphProto* g = &m.graph;
  auto addInit = [&](const std::string& name, std::vector<int64_t> dims, std::vector<float> values) {
    g->initializers.push_back(test::onnxFloats(name, dims, values));
  };
  addInit("onnx::Gemm_7", {3, 2}, {0.5f, -1.0f, 2.0f, 0.25f, -0.75f, 1.5f});
  addInit("onnx::Gemm_8", {2}, {0.1f, -0.2f});
  addInit("fc.bias", {1}, {9.0f});  // a taken name: the generated one gets a suffix, not this one's
  test::addOnnxNode(*g, "Gemm", {"x", "onnx::Gemm_7", "onnx::Gemm_8"}, {"h"}, "/fc/Gemm");
  // the TorchScript exporter's shared copy of an equal initializer, through an Identity
  test::addOnnxNode(*g, "Identity", {"onnx::Gemm_8"}, {"onnx::Gemm_9"}, "Identity_0");
  test::addOnnxNode(*g, "Add", {"h", "onnx::Gemm_9"}, {"y"}, "/head/Add");
  g->outputs.push_back(test::onnxName("y"));
  std::string path = tempModel("params.onnx", m);
  OnnxModel loaded = loadOnnx(path);
  std::set<std::string> params;
  for (const GraphInput& in : loaded.graph.inputs())
    if (in.role == InputRole::Param) params.insert(loaded.graph.value(in.value).name);
  EXPECT_TRUE(params.count("fc.weight")) << ::testing::PrintToString(params);
  EXPECT_TRUE(params.count("fc.bias_2")) << ::testing::PrintToString(params);
  EXPECT_TRUE(params.count("head.bias")) << ::testing::PrintToString(params);  // the Identity copy, named by its reader
  EXPECT_FALSE(params.count("onnx::Gemm_7"));
  fs::remove(path);
}

// Shape arithmetic as the TorchScript exporter writes it (timm's ViT, ShuffleNetV2): a Gather of a
// Shape output (integer data: it was "embedding: weight must be floating point"), and a Slice to
// INT64_MAX ("to the end": as a double that is 2^63, and the cast back made the slice empty).
TEST(OnnxLoader, ShapeArithmeticFoldsGatherOfShapeAndSliceToTheEnd) {
  proto::ModelProto m = modelWithInput({2, 3, 5});
  proto::GraphProto* g = &m.graph;
  auto node = [&](const char* op, std::vector<std::string> ins, const std::string& out) -> proto::NodeProto& {
    return test::addOnnxNode(*g, op, ins, {out});
  };
  auto constant = [&](const std::string& name, int64_t value) {
    proto::TensorProto t;
    t.dataType = proto::INT64;
    t.dims = {1};
    t.int64Data = {value};
    node("Constant", {}, name).attributes.push_back(test::onnxTensorAttr("value", t));
  };
  auto concat = [&](std::vector<std::string> ins, const std::string& out) { node("Concat", ins, out).attributes.push_back(test::onnxIntAttr("axis", 0)); };
  node("Shape", {"x"}, "s");
  constant("first", 0);
  constant("last", -1);
  constant("end", std::numeric_limits<int64_t>::max());
  constant("rest", -1);
  node("Gather", {"s", "first"}, "batch");
  node("Slice", {"s", "last", "end"}, "width");
  concat({"width", "rest"}, "shape");
  concat({"batch", "rest"}, "shape2");
  node("Reshape", {"x", "shape"}, "y");
  node("Reshape", {"x", "shape2"}, "z");
  g->outputs = {test::onnxName("y"), test::onnxName("z")};
  std::string path = tempModel("shape_arithmetic.onnx", m);
  OnnxModel loaded = loadOnnx(path);
  ASSERT_EQ(loaded.graph.outputs().size(), 2u);
  EXPECT_EQ(shapeStr(loaded.graph.type(loaded.graph.outputs()[0]).shape), "[5, 6]");   // width 5, then the rest
  EXPECT_EQ(shapeStr(loaded.graph.type(loaded.graph.outputs()[1]).shape), "[2, 15]");  // batch 2, then the rest
  fs::remove(path);
}

// Only a model's weights are trained: initializers (and Identity copies of them), not Constant
// nodes, values folded at import, integer tensors, batch-norm statistics or Clip's bounds. An op of
// a weight is not folded: the weight behind it trains (the TorchScript exporter without constant
// folding writes each Linear as Transpose(weight) -> MatMul).
TEST(OnnxLoader, OnlyWeightsAreTrainable) {
  proto::ModelProto m = modelWithInput({2, 3, 1, 1});
  proto::GraphProto* g = &m.graph;
  auto init = [&](const std::string& name, std::vector<int64_t> dims, float value) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<float> values;
    for (int64_t i = 0; i < n; ++i) values.push_back(value + 0.25f * static_cast<float>(i));
    g->initializers.push_back(test::onnxFloats(name, dims, values));
  };
  init("bn.weight", {3}, 1.0f);
  init("bn.bias", {3}, 0.1f);
  init("bn.running_mean", {3}, 0.2f);
  init("bn.running_var", {3}, 1.5f);
  init("shift", {1}, 2.0f);
  init("lo", {}, 0.0f);  // ReLU6's bounds, as the dynamo exporter lifts them
  init("hi", {}, 6.0f);
  init("val_41", {}, 2.0f);         // the dynamo exporter's lifted scalars: Pow's exponent, an epsilon
  init("onnx::Add_7", {}, 1e-6f);   // and the TorchScript exporter's
  init("logit_scale", {}, 2.5f);    // a real 0-d parameter keeps its module's name
  init("val_46", {3}, 0.5f);        // a weight the dynamo exporter renamed (a folded transpose)
  auto node = [&](const char* op, std::vector<std::string> ins, const std::string& out) { test::addOnnxNode(*g, op, ins, {out}); };
  node("BatchNormalization", {"x", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"}, "b");
  node("Neg", {"shift"}, "minus_shift");  // an op of a weight: computed at run time, shift trained
  node("Add", {"b", "minus_shift"}, "s");
  node("Clip", {"s", "lo", "hi"}, "c");
  node("Pow", {"c", "val_41"}, "p");
  node("Add", {"p", "onnx::Add_7"}, "e");
  node("Mul", {"e", "logit_scale"}, "l");
  node("Add", {"l", "val_46"}, "y");
  g->outputs.push_back(test::onnxName("y"));
  std::string path = tempModel("trainable.onnx", m);
  OnnxModel loaded = loadOnnx(path);
  std::map<std::string, bool> trainable;
  for (const GraphInput& in : loaded.graph.inputs())
    if (in.role == InputRole::Param) trainable[loaded.graph.value(in.value).name] = in.trainable;
  EXPECT_TRUE(trainable.at("bn.weight"));
  EXPECT_TRUE(trainable.at("bn.bias"));
  EXPECT_FALSE(trainable.at("bn.running_mean"));
  EXPECT_FALSE(trainable.at("bn.running_var"));
  EXPECT_TRUE(trainable.at("shift"));
  EXPECT_FALSE(trainable.count("minus_shift"));
  EXPECT_TRUE(trainable.at("logit_scale"));
  EXPECT_TRUE(trainable.at("val_46"));
  ASSERT_TRUE(trainable.count("onnx::Add_7"));  // a run-time operand, but not a weight
  // Clip's scalar float bounds are literals in the graph, not inputs (a convolution's epilogue
  // takes a clamp by constants only).
  EXPECT_FALSE(trainable.count("lo"));
  EXPECT_FALSE(trainable.count("hi"));
  for (const char* bound : {"val_41", "onnx::Add_7"})
    if (trainable.count(bound)) EXPECT_FALSE(trainable.at(bound)) << bound;
  fs::remove(path);
}

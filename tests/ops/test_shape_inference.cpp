#include <gtest/gtest.h>

#include <climits>
#include <set>

#include "core/ops/registry.h"
#include "test_util.h"

using namespace fusebox;

namespace {

// "f32[B, 3]" -> TensorType; symbols are single identifiers.
TensorType ty(const std::string& spec) {
  TensorType t;
  size_t open = spec.find('[');
  t.dtype = *parseDType(spec.substr(0, open));
  std::string dims = spec.substr(open + 1, spec.size() - open - 2);
  size_t p = 0;
  while (p < dims.size()) {
    size_t comma = dims.find(',', p);
    std::string d = dims.substr(p, comma == std::string::npos ? std::string::npos : comma - p);
    d.erase(0, d.find_first_not_of(' '));
    if (!d.empty()) t.shape.push_back(std::isdigit(d[0]) ? Dim(std::stoll(d)) : Dim::symbol(d));
    if (comma == std::string::npos) break;
    p = comma + 1;
  }
  return t;
}

struct Case {
  std::string op;
  std::vector<std::string> inputs;
  AttrMap attrs;
  std::string expected;
};

using Ints = std::vector<int64_t>;

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"neg", {"f32[B, 3]"}, {}, "f32[B, 3]"},
      {"abs", {"i64[4]"}, {}, "i64[4]"},
      {"relu", {"f32[2, 3]"}, {}, "f32[2, 3]"},
      {"exp", {"f64[2]"}, {}, "f64[2]"},
      {"log", {"f32[2]"}, {}, "f32[2]"},
      {"tanh", {"f16[2]"}, {}, "f16[2]"},
      {"sigmoid", {"bf16[2]"}, {}, "bf16[2]"},
      {"silu", {"f32[2]"}, {}, "f32[2]"},
      {"sqrt", {"f32[2]"}, {}, "f32[2]"},
      {"rsqrt", {"f32[2]"}, {}, "f32[2]"},
      {"erf", {"f32[2]"}, {}, "f32[2]"},
      {"sin", {"f32[2]"}, {}, "f32[2]"},
      {"cos", {"f64[3, 1]"}, {}, "f64[3, 1]"},
      {"atan", {"f32[2]"}, {}, "f32[2]"},
      {"floor", {"f32[2]"}, {}, "f32[2]"},
      {"round", {"f32[2]"}, {}, "f32[2]"},
      {"gelu", {"f32[B, 8]"}, {{"approximate", std::string("tanh")}}, "f32[B, 8]"},
      {"add", {"f32[B, 1, 4]", "f32[3, 1]"}, {}, "f32[B, 3, 4]"},
      {"sub", {"f32[4]", "f32[]"}, {}, "f32[4]"},
      {"mul", {"f32[2, 3]", "f32[2, 3]"}, {}, "f32[2, 3]"},
      {"div", {"f32[2, 3]", "f32[3]"}, {}, "f32[2, 3]"},
      {"pow", {"f32[2, 3]", "f32[]"}, {}, "f32[2, 3]"},
      {"atan2", {"f32[B, 1]", "f32[3]"}, {}, "f32[B, 3]"},
      {"hypot", {"f32[B, 1]", "f32[5]"}, {}, "f32[B, 5]"},
      {"maximum", {"f32[2, 1]", "f32[1, 5]"}, {}, "f32[2, 5]"},
      {"minimum", {"i64[3]", "i64[3]"}, {}, "i64[3]"},
      {"eq", {"i64[3]", "i64[3]"}, {}, "bool[3]"},
      {"ne", {"f32[3]", "f32[]"}, {}, "bool[3]"},
      {"lt", {"f32[3]", "f32[3]"}, {}, "bool[3]"},
      {"le", {"f32[3]", "f32[3]"}, {}, "bool[3]"},
      {"gt", {"i64[1, T]", "i64[T, 1]"}, {}, "bool[T, T]"},
      {"ge", {"f32[3]", "f32[3]"}, {}, "bool[3]"},
      {"where", {"bool[4, 1]", "f32[4, 3]", "f32[]"}, {}, "f32[4, 3]"},
      {"masked_fill", {"f32[B, 12, T, T]", "bool[T, T]"}, {{"value", -1e9}}, "f32[B, 12, T, T]"},
      {"to", {"i64[3]"}, {{"dtype", std::string("f32")}}, "f32[3]"},
      {"full", {}, {{"value", 1.5}}, "f32[]"},
      {"arange", {}, {{"end", Dim::symbol("T")}}, "i64[T]"},
      {"dropout", {"f32[8, 8]"}, {{"p", 0.1}}, "f32[8, 8]"},
      {"sum", {"f32[B, 3, 4]"}, {{"dim", Ints{1}}}, "f32[B, 4]"},
      {"mean", {"f32[B, 3, 4]"}, {{"dim", Ints{-1}}, {"keepdim", true}}, "f32[B, 3, 1]"},
      {"amax", {"f32[2, 3]"}, {}, "f32[]"},
      {"amin", {"f32[2, 3]"}, {{"dim", Ints{0}}}, "f32[3]"},
      {"prod", {"i64[2, 3]"}, {{"dim", Ints{1}}, {"keepdim", true}}, "i64[2, 1]"},
      {"softmax", {"f32[B, 10]"}, {}, "f32[B, 10]"},
      {"log_softmax", {"f32[B, 10]"}, {{"dim", int64_t{0}}}, "f32[B, 10]"},
      {"linear", {"f32[B, T, 768]", "f32[2304, 768]", "f32[2304]"}, {}, "f32[B, T, 2304]"},
      {"matmul", {"f32[B, 12, T, 64]", "f32[B, 12, 64, T]"}, {}, "f32[B, 12, T, T]"},
      {"bmm", {"f32[4, 2, 3]", "f32[4, 3, 5]"}, {}, "f32[4, 2, 5]"},
      {"layer_norm", {"f32[B, T, 768]", "f32[768]", "f32[768]"}, {{"normalized_shape", Ints{768}}}, "f32[B, T, 768]"},
      {"batch_norm", {"f32[B, 16, 8, 8]", "f32[16]", "f32[16]", "f32[16]", "f32[16]"}, {}, "f32[B, 16, 8, 8]"},
      {"conv2d", {"f32[B, 1, 28, 28]", "f32[6, 1, 5, 5]", "f32[6]"}, {{"padding", Ints{2}}}, "f32[B, 6, 28, 28]"},
      {"max_pool2d", {"f32[B, 6, 28, 28]"}, {{"kernel_size", Ints{2}}}, "f32[B, 6, 14, 14]"},
      {"avg_pool2d", {"f32[1, 2, 7, 7]"}, {{"kernel_size", Ints{3}}, {"stride", Ints{2}}, {"padding", Ints{1}}}, "f32[1, 2, 4, 4]"},
      {"adaptive_avg_pool2d", {"f32[B, 16, 7, 7]"}, {{"output_size", Ints{1, 1}}}, "f32[B, 16, 1, 1]"},
      {"embedding", {"i64[B, T]", "f32[50, 16]"}, {}, "f32[B, T, 16]"},
      {"cross_entropy", {"f32[B, 10]", "i64[B]"}, {}, "f32[]"},
      {"mse_loss", {"f32[B, 4]", "f32[B, 4]"}, {}, "f32[]"},
      {"reshape", {"f32[B, T, 768]"}, {{"shape", Shape{Dim::symbol("B"), Dim::symbol("T"), 12, -1}}}, "f32[B, T, 12, 64]"},
      {"view", {"f32[2, 3, 4]"}, {{"shape", Ints{6, 4}}}, "f32[6, 4]"},
      {"permute", {"f32[B, T, 12, 64]"}, {{"dims", Ints{0, 2, 1, 3}}}, "f32[B, 12, T, 64]"},
      {"transpose", {"f32[B, 12, T, 64]"}, {{"dim0", int64_t{-2}}, {"dim1", int64_t{-1}}}, "f32[B, 12, 64, T]"},
      {"expand", {"f32[1, 4]"}, {{"shape", Ints{2, 3, -1}}}, "f32[2, 3, 4]"},
      {"slice", {"f32[B, T, 2304]"}, {{"dim", int64_t{2}}, {"start", int64_t{768}}, {"end", int64_t{1536}}}, "f32[B, T, 768]"},
      {"cat", {"f32[B, 2]", "f32[B, 5]"}, {{"dim", int64_t{1}}}, "f32[B, 7]"},
      // Backward ops emitted by the derivative formulas.
      {"conv2d_backward_input", {"f32[B, 6, 28, 28]", "f32[6, 1, 5, 5]"},
       {{"input_shape", Shape{Dim::symbol("B"), 1, 28, 28}}, {"padding", Ints{2}}}, "f32[B, 1, 28, 28]"},
      {"conv2d_backward_weight", {"f32[B, 1, 28, 28]", "f32[B, 6, 28, 28]"}, {{"weight_shape", Ints{6, 1, 5, 5}}},
       "f32[6, 1, 5, 5]"},
      {"max_pool2d_backward", {"f32[B, 6, 14, 14]", "f32[B, 6, 28, 28]"}, {{"kernel_size", Ints{2}}}, "f32[B, 6, 28, 28]"},
      {"avg_pool2d_backward", {"f32[1, 2, 4, 4]"}, {{"input_shape", Ints{1, 2, 7, 7}}, {"kernel_size", Ints{3}}},
       "f32[1, 2, 7, 7]"},
      {"adaptive_avg_pool2d_backward", {"f32[B, 16, 1, 1]"}, {{"input_shape", Shape{Dim::symbol("B"), 16, 7, 7}}},
       "f32[B, 16, 7, 7]"},
      {"embedding_backward", {"f32[B, T, 16]", "i64[B, T]"}, {{"num_weights", int64_t{50}}}, "f32[50, 16]"},
      {"slice_backward", {"f32[B, T, 768]"},
       {{"input_shape", Shape{Dim::symbol("B"), Dim::symbol("T"), 2304}}, {"dim", int64_t{2}}, {"start", int64_t{768}}},
       "f32[B, T, 2304]"},
      {"sym_size", {}, {{"size", Dim::symbol("B")}}, "f32[]"},
  };
  return c;
}

}  // namespace

TEST(ShapeInference, EveryRegistryOpHasACase) {
  std::set<std::string> covered;
  for (const Case& c : cases()) covered.insert(c.op);
  for (const OpSchema* s : OpRegistry::instance().torchOps()) EXPECT_TRUE(covered.count(s->name)) << "no shape case for " << s->name;
  EXPECT_GE(OpRegistry::instance().torchOps().size(), 50u);
}

TEST(ShapeInference, EachOpInfersTheExpectedType) {
  for (const Case& c : cases()) {
    std::vector<TensorType> in;
    for (const std::string& s : c.inputs) in.push_back(ty(s));
    AttrMap attrs = c.attrs;
    std::vector<TensorType> out;
    ASSERT_NO_THROW(out = inferTypes(c.op, in, attrs)) << c.op;
    ASSERT_EQ(out.size(), 1u) << c.op;
    EXPECT_EQ(out[0].str(), ty(c.expected).str()) << c.op;
  }
}

TEST(ShapeInference, SliceClampsLikePython) {
  AttrMap attrs{{"dim", int64_t{0}}, {"start", int64_t{-3}}, {"end", int64_t{INT64_MAX}}, {"step", int64_t{2}}};
  EXPECT_EQ(inferTypes("slice", {ty("f32[10]")}, attrs)[0].str(), "f32[2]");
}

TEST(ShapeInference, MatmulVectorCases) {
  AttrMap none;
  EXPECT_EQ(inferTypes("matmul", {ty("f32[3]"), ty("f32[3]")}, none)[0].str(), "f32[]");
  EXPECT_EQ(inferTypes("matmul", {ty("f32[2, 3]"), ty("f32[3]")}, none)[0].str(), "f32[2]");
  EXPECT_EQ(inferTypes("matmul", {ty("f32[3]"), ty("f32[4, 3, 5]")}, none)[0].str(), "f32[4, 5]");
}

TEST(ShapeInference, ErrorsNameTheOpAndTheProblem) {
  struct Bad {
    std::string op;
    std::vector<std::string> inputs;
    AttrMap attrs;
    std::string message;
  };
  const std::vector<Bad> bad = {
      {"linear", {"f32[B, 784]", "f32[256, 512]"}, {}, "linear: input feature size (last dim of [B, 784]) is 784 but 512"},
      {"add", {"f32[2, 3]", "i64[2, 3]"}, {}, "add: dtype mismatch: f32[2, 3] vs i64[2, 3]"},
      {"exp", {"i64[3]"}, {}, "exp: input 0 must be floating point"},
      {"softmax", {"f32[2, 3]"}, {{"dim", int64_t{2}}}, "dimension 2 is out of range for a tensor of rank 2"},
      {"matmul", {"f32[2, 3]", "f32[4, 5]"}, {}, "inner dimension"},
      {"conv2d", {"f32[1, 3, 8, 8]", "f32[4, 2, 3, 3]"}, {}, "weight input channels is 2 but 3 was expected"},
      {"cross_entropy", {"f32[4, 10]", "f32[4]"}, {}, "target must hold class indices"},
      {"reshape", {"f32[2, 3]"}, {{"shape", Ints{5}}}, "cannot reshape [2, 3]"},
      {"where", {"f32[2]", "f32[2]", "f32[2]"}, {}, "condition must be bool"},
      {"sum", {"f32[2]"}, {{"dims", Ints{0}}}, "unknown attribute 'dims' (it takes: dim, keepdim)"},
      {"transpose", {"f32[2]"}, {}, "missing required attribute 'dim0'"},
      {"gelu", {"f32[2]"}, {{"approximate", int64_t{1}}}, "attribute 'approximate' must be a string"},
      {"relu", {}, {}, "relu: expects 1 tensor input(s), got 0"},
      {"nope", {}, {}, "unknown op 'nope'"},
      {"cat", {"f32[2, 3]", "f32[3, 3]"}, {{"dim", int64_t{1}}}, "differs outside the cat dimension"},
      {"layer_norm", {"f32[4, 8]"}, {{"normalized_shape", Ints{4}}}, "does not match the trailing dims"},
  };
  for (const Bad& b : bad) {
    std::vector<TensorType> in;
    for (const std::string& s : b.inputs) in.push_back(ty(s));
    AttrMap attrs = b.attrs;
    test::expectThrowContaining<ShapeError>([&] { inferTypes(b.op, in, attrs); }, b.message);
  }
}

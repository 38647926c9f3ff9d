#include <gtest/gtest.h>

#include "core/frontend/fbx_parser.h"
#include "core/frontend/model_loader.h"
#include "test_util.h"

using namespace fusebox;

TEST(Parser, ParsesHeaderParamsScopesAndExpressions) {
  ModelDef m = parseModel(R"(# A test model.
# Second line.
model t(x: f32[B, 4], y: i64[B] range(0, 3)) dims(B = 2) {
  scope fc {
    param weight: f32[3, 4] = randn(seed=7) * 0.5
    param bias: f32[3] = ones * 2
  }
  h = linear(x, weight=fc.weight) + -1.5e-1 * 2
  return cross_entropy(h, y), h
}
)", "t.fbx");
  EXPECT_EQ(m.name, "t");
  EXPECT_EQ(m.description, "A test model. Second line.");
  ASSERT_EQ(m.inputs.size(), 2u);
  EXPECT_EQ(m.inputs[0].type.dims[0].symbol, "B");
  EXPECT_EQ(*m.inputs[0].type.dims[1].value, 4);
  EXPECT_EQ(m.inputs[1].range, (std::pair<int64_t, int64_t>{0, 3}));
  ASSERT_EQ(m.dims.size(), 1u);
  EXPECT_EQ(m.dims[0], (std::pair<std::string, int64_t>{"B", 2}));
  ASSERT_EQ(m.body.size(), 3u);
  const Stmt& scope = m.body[0];
  EXPECT_EQ(scope.kind, Stmt::Kind::Scope);
  ASSERT_EQ(scope.body.size(), 2u);
  EXPECT_EQ(scope.body[0].init.kind, InitSpec::Kind::Randn);
  EXPECT_DOUBLE_EQ(scope.body[0].init.a, 0.5);
  EXPECT_EQ(scope.body[0].init.seed, 7u);
  EXPECT_EQ(scope.body[1].init.kind, InitSpec::Kind::Full);
  EXPECT_DOUBLE_EQ(scope.body[1].init.a, 2.0);
  const Expr& sum = m.body[1].values[0];
  EXPECT_EQ(sum.kind, Expr::Kind::Binary);
  EXPECT_EQ(sum.text, "+");
  EXPECT_EQ(sum.args[0].argNames, (std::vector<std::string>{"", "weight"}));
  EXPECT_EQ(sum.args[1].text, "*");  // precedence: a + (b * c)
  EXPECT_EQ(sum.args[1].args[0].kind, Expr::Kind::Negate);
  EXPECT_EQ(m.body[2].values.size(), 2u);
  EXPECT_EQ(m.body[1].loc.line, 8);
  EXPECT_EQ(m.body[1].loc.col, 3);
}

struct Malformed {
  const char* source;
  const char* expected;  // the exact "file:line:col: message" prefix
};

class MalformedModel : public ::testing::TestWithParam<Malformed> {};

TEST_P(MalformedModel, GivesFileLineColumnMessage) {
  const Malformed& c = GetParam();
  try {
    Graph g = trace(parseModel(c.source, "bad.fbx"));
    FAIL() << "no error for: " << c.source;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).substr(0, std::string(c.expected).size()), c.expected) << "got: " << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Parser, MalformedModel,
    ::testing::Values(
        Malformed{"", "bad.fbx:1:1: empty model file"},
        Malformed{"modle m() {}", "bad.fbx:1:1: expected 'model', found 'modle'"},
        Malformed{"model m(x: f33[2]) { return x }", "bad.fbx:1:12: unknown dtype 'f33'"},
        Malformed{"model m(x: f32[2) { return x }", "bad.fbx:1:17: expected ']', found ')'"},
        Malformed{"model m(x: f32[2]) {\n  return relu(x\n}", "bad.fbx:3:1: expected ',' or ')' in the call to relu, found '}'"},
        Malformed{"model m(x: f32[2]) {\n  y = relu(x)\n", "bad.fbx:3:1: missing '}'"},
        Malformed{"model m(x: f32[2]) {\n  y = x $ 2\n  return y }", "bad.fbx:2:9: unexpected character '$'"},
        Malformed{"model m(x: f32[2]) {\n  return gelu(x, approximate=\"tanh)\n}", "bad.fbx:2:30: unterminated string literal"},
        Malformed{"model m(x: f32[2]) {\n  return relu(z)\n}", "bad.fbx:2:15: unknown name 'z'"},
        Malformed{"model m(x: f32[2]) {\n  return rellu(x)\n}", "bad.fbx:2:10: unknown op 'rellu' (did you mean 'relu'?)"},
        Malformed{"model m(x: f32[2, 3]) {\n  param w: f32[4, 4] = randn(seed=1)\n  return linear(x, w)\n}",
                  "bad.fbx:3:10: linear: input feature size (last dim of [2, 3]) is 3 but 4 was expected"},
        Malformed{"model m(x: f32[2]) {\n  y = relu(x)\n}", "bad.fbx:1:1: model 'm' has no return statement"},
        Malformed{"model m(x: f32[2]) {\n  param w: f32[2] = kaiming\n  return x\n}", "bad.fbx:2:21: unknown initializer 'kaiming'"},
        Malformed{"model m(x: f32[2], x: f32[3]) { return x }", "bad.fbx:1:20: duplicate input 'x'"},
        Malformed{"model m(x: f32[2]) {\n  return softmax(x, dims=0)\n}", "bad.fbx:2:26: softmax: unknown argument 'dims'"},
        Malformed{"model m(x: f32[-1]) { return x }", "bad.fbx:1:16: dimension size must not be negative"},
        Malformed{"model m(x: f32[2]) {\n  return x\n  y = x\n}", "bad.fbx:3:3: statement after return"},
        Malformed{"model m(x: f32[2]) {\n  return 1.5e\n}", "bad.fbx:2:10: malformed number: exponent has no digits"},
        Malformed{"model m(x: f32[B]) {\n  param w: f32[B] = zeros\n  return x\n}", "bad.fbx:2:16: parameter sizes must be concrete"},
        Malformed{"model m(x: f32[2]) {\n  return x + \"s\"\n}", "bad.fbx:2:12: operator '+' needs a tensor or two numbers"},
        Malformed{"model m(x: f32[2]) { return x } extra", "bad.fbx:1:33: unexpected 'extra' after the end of the model"},
        Malformed{"model m(x: f32[2]) dims(B = -1) { return x }", "bad.fbx:1:25: dimension B must not be negative"}),
    [](const ::testing::TestParamInfo<Malformed>& info) { return "case" + std::to_string(info.index); });

TEST(ModelLoader, UnknownModelAndMissingFile) {
  test::expectThrowContaining<Error>([] { loadModel("nosuchmodel"); }, "unknown model 'nosuchmodel': not a built-in model (");
  test::expectThrowContaining<Error>([] { loadModel("/nonexistent/m.fbx"); }, "cannot open model file '/nonexistent/m.fbx'");
}

#include <gtest/gtest.h>

#include "core/ir/json_writer.h"
#include "core/ir/printers.h"
#include "core/ops/registry.h"
#include "test_util.h"

using namespace fusebox;

namespace {
const char* kModel = R"(
model tiny(x: f32[B, 4]) dims(B = 2) {
  scope fc {
    param weight: f32[3, 4] = randn(seed=1, std=0.5)
    h = relu(linear(x, weight))
  }
  return softmax(h, -1)
}
)";
}

TEST(Printers, TextShowsTypesAttrsScopesAndLocations) {
  Graph g = test::traceSource(kModel, TraceOptions{{}, true});
  std::string text = printText(g);
  EXPECT_NE(text.find("graph tiny(%x: f32[B, 4])"), std::string::npos) << text;
  EXPECT_NE(text.find("param %fc.weight: f32[3, 4] = randn(seed=1, std=0.5)"), std::string::npos) << text;
  EXPECT_NE(text.find("%h: f32[B, 3] = relu("), std::string::npos) << text;
  EXPECT_NE(text.find("softmax(%h, dim=-1)"), std::string::npos) << text;
  EXPECT_NE(text.find(" fc @test.fbx:5:"), std::string::npos) << text;
  EXPECT_NE(text.find("return %output"), std::string::npos) << text;
}

TEST(Printers, JsonHasEveryNodeWithAttributesAndProvenance) {
  Graph g = test::traceSource(kModel);
  std::string json = printJson(g);
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json.back(), '}');
  EXPECT_NE(json.find(R"("op":"linear")"), std::string::npos);
  EXPECT_NE(json.find(R"("attrs":{"dim":{"int":-1}})"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("provenance":[2])"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("shape":[2,4])"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("role":"param")"), std::string::npos);
  // Balanced braces and brackets outside strings: a cheap well-formedness check.
  int depth = 0;
  bool inString = false;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (inString) {
      if (c == '\\') ++i;
      else if (c == '"') inString = false;
      continue;
    }
    if (c == '"') inString = true;
    else if (c == '{' || c == '[') ++depth;
    else if (c == '}' || c == ']') --depth;
    ASSERT_GE(depth, 0);
  }
  EXPECT_EQ(depth, 0);
}

TEST(Printers, DotHasClustersColorsAndEdges) {
  Graph g = test::traceSource(kModel);
  std::string dot = printDot(g, DotOptions{opKindColor, true});
  EXPECT_EQ(dot.rfind("digraph \"tiny\" {", 0), 0u);
  EXPECT_NE(dot.find("subgraph \"cluster_fc\""), std::string::npos);
  EXPECT_NE(dot.find("n0 [label=\"linear\\nf32[2, 3]\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("fillcolor=\"#d4e4fb\""), std::string::npos);  // matmul-kind color
  EXPECT_NE(dot.find("n0 -> n1;"), std::string::npos);
  EXPECT_NE(dot.find("-> out0;"), std::string::npos);
}

TEST(JsonWriter, EscapesAndNonFinite) {
  JsonWriter w;
  w.beginObject().key("s").value("a\"b\\c\n").key("x").value(1.5).key("inf").value(1.0 / 0.0).key("l").beginArray();
  w.value(int64_t{1}).value(true).null().endArray().endObject();
  EXPECT_EQ(w.str(), R"({"s":"a\"b\\c\n","x":1.5,"inf":"inf","l":[1,true,null]})");
}

#include <gtest/gtest.h>

#include "core/ir/printers.h"
#include "test_util.h"

using namespace fusebox;

namespace {
const char* kScoped = R"(
model s(x: f32[B, T, 8]) dims(B = 2, T = 3) {
  scope block {
    scope proj {
      param weight: f32[8, 8] = randn(seed=1)
      h = linear(x, weight)
    }
    h = reshape(h, [B * T, 8])
  }
  return softmax(h * 0.5, -1)
}
)";
}

TEST(Trace, ConcreteDimsFromModelDefaults) {
  Graph g = test::traceSource(kScoped);
  EXPECT_EQ(g.type(g.inputs()[0].value).str(), "f32[2, 3, 8]");
  EXPECT_EQ(g.type(g.outputs()[0]).str(), "f32[6, 8]");
}

TEST(Trace, SymbolicDimsStaySymbolic) {
  Graph g = test::traceSource(kScoped, TraceOptions{{}, true});
  EXPECT_EQ(g.type(g.inputs()[0].value).str(), "f32[B, T, 8]");
  EXPECT_EQ(g.type(g.outputs()[0]).str(), "f32[B*T, 8]");
  Graph h = test::traceSource(kScoped, TraceOptions{{{"T", 5}}, true});
  EXPECT_EQ(h.type(h.outputs()[0]).str(), "f32[5*B, 8]");
}

TEST(Trace, OverridingDims) {
  Graph g = test::traceSource(kScoped, TraceOptions{{{"B", 4}}, false});
  EXPECT_EQ(g.type(g.outputs()[0]).str(), "f32[12, 8]");
  test::expectThrowContaining<Error>([] { test::traceSource(kScoped, TraceOptions{{{"Q", 4}}, false}); },
                                     "model 's' has no dimension named Q (it has: B, T)");
}

TEST(Trace, ScopesNamesAndProvenance) {
  Graph g = test::traceSource(kScoped);
  ASSERT_EQ(g.inputs().size(), 2u);
  EXPECT_EQ(g.value(g.inputs()[1].value).name, "block.proj.weight");
  EXPECT_EQ(g.inputs()[1].role, InputRole::Param);
  ASSERT_EQ(g.nodes().size(), 5u);  // linear, reshape, full(0.5), mul, softmax
  EXPECT_EQ(g.nodes()[0].op, "linear");
  EXPECT_EQ(g.nodes()[0].scope, "block.proj");
  EXPECT_EQ(g.nodes()[1].scope, "block");
  EXPECT_EQ(g.nodes()[2].op, "full");
  EXPECT_EQ(std::get<std::string>(g.nodes()[2].attrs.at("dtype")), "f32");  // scalar takes the tensor's dtype
  EXPECT_EQ(g.nodes()[4].scope, "");
  EXPECT_EQ(g.value(g.nodes()[1].outputs[0]).name, "h_1");  // reassigned names stay unique
  EXPECT_EQ(g.value(g.outputs()[0]).name, "output");
  for (const Node& n : g.nodes()) {
    EXPECT_EQ(n.provenance, std::vector<NodeId>{n.id});
    EXPECT_TRUE(n.loc.valid());
  }
  EXPECT_EQ(g.nodes()[0].loc.line, 6);
}

TEST(Trace, ScalarArgumentsAndKeywordInputs) {
  Graph g = test::traceSource(R"(
model k(x: f32[4], c: bool[4]) {
  a = pow(x, 2)
  b = where(c, a, 0.0)
  return masked_fill(b, c, value=-inf), linear(reshape(b, [1, 4]), weight=reshape(x, [1, 4]))
})");
  EXPECT_EQ(g.outputs().size(), 2u);
  // pow's exponent and where's else-value become f32 constants (not bool, despite the bool first argument).
  int fulls = 0;
  for (const Node& n : g.nodes())
    if (n.op == "full") {
      ++fulls;
      EXPECT_EQ(std::get<std::string>(n.attrs.at("dtype")), "f32");
    }
  EXPECT_EQ(fulls, 2);
}

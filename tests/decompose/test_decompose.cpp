// Every op's decomposition into prims against the op itself in the interpreter: float64 within
// 1e-10, float32 within 1e-5; only prims remain and provenance survives.
#include <gtest/gtest.h>

#include <set>

#include "core/autograd/joint_graph.h"
#include "core/decompose/decompose.h"
#include "core/interp/interpreter.h"
#include "core/ir/verifier.h"
#include "core/ops/registry.h"
#include "grad_check.h"
#include "op_cases.h"
#include "test_util.h"

using namespace fusebox;

namespace {

void expectSameOutputs(const Graph& a, const Graph& b, const std::vector<Tensor>& in, Precision p, double tol,
                       const std::string& what) {
  std::vector<Tensor> x = interpret(a, in, p), y = interpret(b, in, p);
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_TRUE(allClose(y[i], x[i], tol, tol)) << what << " output " << i << ": max abs diff " << compareTensors(y[i], x[i]).maxAbs;
}

}  // namespace

class OpDecomposition : public ::testing::TestWithParam<test::OpCase> {};

TEST_P(OpDecomposition, EqualsTheOpInFloat64AndFloat32) {
  const test::OpCase& c = GetParam();
  for (DType dt : {DType::F64, DType::F32}) {
    Graph g = test::opCaseGraph(c, dt);
    Graph p = decompose(g);
    EXPECT_NO_THROW(verifyGraph(p, primOpTyper()));
    for (const Node& n : p.nodes()) EXPECT_EQ(n.provenance, std::vector<NodeId>{g.nodes()[0].id}) << n.op;
    expectSameOutputs(g, p, test::opCaseInputs(c, g, 2), Precision::Native, dt == DType::F64 ? 1e-10 : 1e-5,
                      c.name + (dt == DType::F64 ? " f64" : " f32"));
  }
}

// The joint graph of each op exercises the decompositions of everything the backward emits.
TEST_P(OpDecomposition, JointGraphDecomposesToTheSameFunction) {
  const test::OpCase& c = GetParam();
  Graph g = test::opCaseGraph(c);
  JointOptions opts;
  opts.allFloatInputs = true;
  JointGraph joint;
  try {
    joint = buildJointGraph(g, opts);
  } catch (const Error&) {
    GTEST_SKIP() << "no joint graph for " << c.op;  // backward ops (second order), checked in test_gradients
  }
  Graph p = decompose(joint.graph);
  std::vector<Tensor> in = test::jointInputs(joint, test::opCaseInputs(c, g, 3), 3);
  expectSameOutputs(joint.graph, p, in, Precision::Float64, 1e-10, c.name + " joint");
}

INSTANTIATE_TEST_SUITE_P(Decompose, OpDecomposition, ::testing::ValuesIn(test::opCases()),
                         [](const auto& info) { return info.param.name; });

TEST(Decompose, ClosedPrimSetOfReasonableSize) {
  size_t prims = OpRegistry::instance().prims().size();
  EXPECT_GE(prims, 40u);
  EXPECT_LE(prims, 60u);
  for (const OpSchema* s : OpRegistry::instance().prims()) {
    EXPECT_EQ(s->name.rfind("prims.", 0), 0u) << s->name;
    EXPECT_FALSE(s->summary.empty()) << s->name;
  }
  for (const OpSchema* s : OpRegistry::instance().torchOps()) EXPECT_TRUE(hasDecomposition(s->name)) << s->name;
}

TEST(Decompose, VerifierRejectsTorchOpsInPrimGraphs) {
  Graph g = test::traceSource("model m(x: f32[4]) { return relu(x) }");
  test::expectThrowContaining<VerifyError>([&] { verifyGraph(g, primOpTyper()); }, "'relu' is not a prim");
  Graph p = decompose(g);
  test::expectThrowContaining<VerifyError>([&] { verifyGraph(p, torchOpTyper()); }, "in a torch-level graph");
}

TEST(Decompose, SymbolicShapesUseSymSize) {
  Graph g = test::traceSource("model m(x: f32[B, 4]) dims(B = 3) { return mean(x) }", TraceOptions{{}, true});
  Graph p = decompose(g);
  std::map<std::string, int> ops = countOps(p);
  EXPECT_EQ(ops["prims.sym_size"], 1);
  EXPECT_EQ(p.type(p.outputs()[0]).str(), "f32[]");
}

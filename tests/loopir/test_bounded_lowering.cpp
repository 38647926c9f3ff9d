// Bounded work in lowering: provenance stays a set of traced nodes on graphs whose paths rejoin,
// inlined expression trees stay within kMaxExprDepth / kMaxExprNodes (long chains, long view
// chains, values used twice by each consumer), a wide concatenation becomes a tree of small ones,
// and every one of them still computes what the prim graph computes.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/decompose/decompose.h"
#include "core/interp/interpreter.h"
#include "core/loopir/loop_interp.h"
#include "core/loopir/lower.h"
#include "scale_models.h"
#include "test_util.h"

using namespace fusebox;

namespace {

ExprExtent maxExtent(const LoopProgram& p) {
  ExprExtent m;
  for (const LoopNode& n : p.nodes) {
    if (!n.body) continue;
    ExprExtent e = exprExtent(*n.body);
    m.depth = std::max(m.depth, e.depth);
    m.nodes = std::max(m.nodes, e.nodes);
  }
  return m;
}

// Lowers `src`, checks the limits, and compares the loop program with the prim graph.
LoopProgram lowerChecked(const std::string& src, double tol = 1e-9) {
  Graph traced = test::traceSource(src);
  Graph prims = decompose(traced);
  LoopProgram p = lower(prims);
  ExprExtent m = maxExtent(p);
  EXPECT_LE(m.depth, kMaxExprDepth);
  EXPECT_LE(m.nodes, kMaxExprNodes);
  for (const LoopNode& n : p.nodes) EXPECT_LE(n.prims.size(), static_cast<size_t>(kMaxExprNodes));  // views count too
  std::vector<Tensor> in = makeInputs(prims, 3);
  std::vector<Tensor> want = interpret(prims, in), got = interpretLoops(p, in);
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    got[i].sizes = want[i].sizes;
    EXPECT_TRUE(allClose(got[i], want[i], tol, tol)) << "max abs diff " << compareTensors(got[i], want[i]).maxAbs;
  }
  return p;
}

}  // namespace

TEST(BoundedLowering, ExprExtentCountsSharedSubtreesPerUseAndStopsAtTheCap) {
  LExprPtr x = LExpr::load("b", DType::F32, IndexExpr(0));
  for (int i = 0; i < 40; ++i) x = LExpr::binary(BinaryOp::Add, x, x, DType::F32);  // 2^41 - 1 nodes as a tree
  ExprExtent e = exprExtent(*x, 1000);
  EXPECT_EQ(e.nodes, 1000);
  ExprExtent small = exprExtent(*LExpr::binary(BinaryOp::Mul, LExpr::constant(2, DType::F32), LExpr::constant(3, DType::F32), DType::F32));
  EXPECT_EQ(small.depth, 2);
  EXPECT_EQ(small.nodes, 3);
}

// 80 values, each from the two before it: 2^40 paths from the input to the output. Lowering had
// concatenated the provenance of both operands at every step (a 100-node model exhausted 8 GB).
TEST(BoundedLowering, ProvenanceStaysBoundedOnRejoiningPaths) {
  Graph traced = test::traceSource(test::diamondSource(80));
  LoopProgram p = lowerChecked(test::diamondSource(80));
  size_t total = 0;
  for (const LoopNode& n : p.nodes) {
    EXPECT_TRUE(std::is_sorted(n.provenance.begin(), n.provenance.end()));
    EXPECT_EQ(std::adjacent_find(n.provenance.begin(), n.provenance.end()), n.provenance.end());
    EXPECT_LE(n.provenance.size(), traced.nodes().size());
    total += n.provenance.size();
  }
  // A traced node is listed by the loop nodes that compute it: a few, however the paths rejoin.
  EXPECT_LE(total, 4 * traced.nodes().size());
}

TEST(BoundedLowering, LongChainStaysWithinTheExpressionLimits) {
  LoopProgram p = lowerChecked(test::chainSource(600));
  EXPECT_GT(p.nodes.size(), 1u);  // split into temporaries
}

TEST(BoundedLowering, LongViewChainStaysWithinTheExpressionLimits) {
  // 500 reshapes and transposes compute nothing, but each was one more nested loader call.
  lowerChecked(test::viewChainSource(500));
}

TEST(BoundedLowering, ValuesUsedTwiceByEachConsumerDoNotDoubleTheTree) {
  // h = h * h + h: every step doubles the tree an inlined value would build.
  std::string s = test::scaleHeader("square");
  for (int i = 1; i < 60; ++i) {
    std::string prev = "h" + std::to_string(i - 1);
    s += "  h" + std::to_string(i) + " = sin(" + prev + " * " + prev + " + " + prev + ")\n";
  }
  lowerChecked(s + "  return h59\n}\n");
}

TEST(BoundedLowering, RandomDagMatchesTheGraph) { lowerChecked(test::dagSource(600), 1e-6); }

// A cat of 300 inputs: a tree of cats of at most kCatChunk inputs, each realized, instead of one
// select chain 300 deep.
TEST(BoundedLowering, ManyInputConcatIsATreeOfSmallConcats) {
  LoopProgram p = lowerChecked(test::concatSource(300));
  int cats = 0;
  for (const LoopNode& n : p.nodes) {
    if (std::find(n.prims.begin(), n.prims.end(), PrimUse{"prims.cat"}) == n.prims.end()) continue;
    ++cats;
    std::vector<std::pair<std::string, IndexExpr>> loads;
    n.body->collectLoads(loads);
    EXPECT_LE(loads.size(), static_cast<size_t>(kCatChunk) * 2);
  }
  EXPECT_GE(cats, 300 / kCatChunk);
}

TEST(BoundedLowering, SmallConcatIsOneSelectChain) {
  LoopProgram p = lowerChecked(test::concatSource(5));
  EXPECT_EQ(p.nodes.size(), 1u);
}

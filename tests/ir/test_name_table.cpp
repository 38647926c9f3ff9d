// NameTable gives the names a linear probe would (the smallest free suffix) in amortized
// logarithmic time, and Graph naming stays linear over 100,000 values.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <set>

#include "core/ir/graph.h"
#include "core/ir/name_table.h"

using namespace fusebox;

namespace {

std::string probe(const std::set<std::string>& names, const std::string& base) {
  if (!names.count(base)) return base;
  for (int i = 1;; ++i)
    if (!names.count(base + "_" + std::to_string(i))) return base + "_" + std::to_string(i);
}

}  // namespace

TEST(NameTable, PicksWhatALinearProbePicksUnderInsertsAndErases) {
  std::mt19937 rng(7);
  NameTable table;
  std::set<std::string> reference;
  const char* bases[] = {"h", "relu", "h_1", "x"};
  for (int step = 0; step < 20000; ++step) {
    int what = rng() % 4;
    if (what < 2 || reference.empty()) {  // a unique name from a base, taken
      std::string base = bases[rng() % 4];
      std::string got = table.unique(base);
      ASSERT_EQ(got, probe(reference, base)) << "step " << step;
      table.insert(got);
      reference.insert(got);
    } else if (what == 2) {  // a chosen name, maybe colliding with a suffix ("h_12", "h_01")
      std::string name = std::string(bases[rng() % 4]) + "_" + std::to_string(rng() % 40) + (rng() % 5 ? "" : "0");
      if (rng() % 7 == 0) name = "h_0" + std::to_string(rng() % 5);
      table.insert(name);
      reference.insert(name);
    } else {  // a rename frees a name
      auto it = reference.begin();
      std::advance(it, rng() % reference.size());
      table.erase(*it);
      reference.erase(it);
    }
  }
}

TEST(NameTable, GraphNamingIsLinear) {
  Graph g;
  ValueId x = g.addInput("x", TensorType{DType::F32, {Dim(2)}}, InputRole::Input);
  auto t0 = std::chrono::steady_clock::now();
  ValueId h = x;
  for (int i = 0; i < 100000; ++i) {
    NodeId n = g.addNode("relu", {h}, {}, {TensorType{DType::F32, {Dim(2)}}});
    h = g.node(n).outputs[0];
    g.nameValue(h, "h");  // h, h_1, h_2, ...
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(g.value(h).name, "h_99999");
  EXPECT_LT(s, 10.0);  // a probe per name was quadratic: minutes
  EXPECT_NE(g.inputInfo(x), nullptr);
  EXPECT_EQ(g.inputInfo(h), nullptr);
}

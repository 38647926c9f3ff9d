#include "core/autograd/partition_comparison.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/ir/memory_budget.h"

namespace fusebox {

namespace {

std::string describeSide(const Partition& part) {
  struct Saved {
    std::string name, type;
    int64_t bytes;
  };
  std::vector<Saved> saved;
  for (const GraphInput& in : part.backward.inputs())
    if (in.role == InputRole::Saved) {
      const TensorType& t = part.backward.type(in.value);
      saved.push_back({part.backward.value(in.value).name, t.str(), estimatedBytes(t)});
    }
  std::stable_sort(saved.begin(), saved.end(), [](const Saved& a, const Saved& b) { return a.bytes > b.bytes; });
  const PartitionReport& r = part.report;
  std::string s = std::string(partitionerName(r.partitioner)) + ": " + std::to_string(saved.size()) + " saved tensors, " +
                  formatBytes(r.savedBytes) + "; " + std::to_string(r.recomputedOps) + " ops recomputed in the backward\n\n";
  s += "saved for the backward (largest first):\n";
  for (const Saved& x : saved) {
    char line[64];
    std::snprintf(line, sizeof line, "%12s  ", formatBytes(x.bytes).c_str());
    s += line + x.name + "  " + x.type + "\n";
  }
  s += "\nrecomputed in the backward (in order):\n";
  size_t n = 0;
  for (const Node& node : part.backward.nodes()) {
    if (!node.recomputed) continue;
    ++n;
    // The value's name too: a recomputed op and a saved tensor of the same op and type are told apart by it.
    ValueId out = node.outputs.at(0);
    s += "  " + node.op + " -> " + part.backward.value(out).name + "  " + part.backward.type(out).str() +
         (node.scope.empty() ? "" : "  (" + node.scope + ")") + "\n";
  }
  if (n == 0) s += "  none\n";
  return s;
}

}  // namespace

std::vector<PartitionerSide> comparePartitioners(const JointGraph& joint) {
  std::vector<PartitionerSide> out;
  for (Partitioner p : {Partitioner::Default, Partitioner::MinCut}) {
    Partition part = partitionJointGraph(joint, p);
    out.push_back({part.report, describeSide(part)});
  }
  return out;
}

std::string partitionerVerdict(const PartitionReport& byDefault, const PartitionReport& minCut) {
  int64_t d = byDefault.savedBytes, m = minCut.savedBytes;
  std::string change = d > 0 ? ", " + std::to_string(std::lround(100.0 * static_cast<double>(m - d) / static_cast<double>(d))) + "%" : "";
  std::string figures = " (" + formatBytes(m) + " vs " + formatBytes(d) + change + ")";
  std::string how = minCut.recomputedOps ? " by recomputing " + std::to_string(minCut.recomputedOps) + " ops in the backward" : "";
  // "saves" reads as "spares"; say what is kept for the backward.
  if (m < d) return "min-cut keeps " + formatBytes(d - m) + " less for the backward than default" + figures + how;
  if (m == d) return "min-cut keeps as much for the backward as default" + figures + how;
  return "min-cut keeps " + formatBytes(m - d) + " more for the backward than default" + figures + how;
}

}  // namespace fusebox

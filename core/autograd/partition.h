// Stage 2b: splitting a joint graph into a forward graph and a backward graph.
//
// The forward graph takes the primals and returns the forward outputs followed by the saved
// tensors; the backward graph takes the saved tensors (role Saved) and the tangents and returns
// the gradients. Two partitioners choose what is saved:
//   Default  everything the forward computes and the backward uses is saved (PyTorch's default).
//   MinCut   a max-flow/min-cut over bytes chooses the cheapest set of tensors to save; cheap ops
//            (pointwise, views, reductions, norms) between the saved set and the backward are
//            recomputed in the backward instead of saved. Matmul, conv, pooling and losses are
//            never recomputed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/autograd/joint_graph.h"

namespace fusebox {

enum class Partitioner { Default, MinCut };
const char* partitionerName(Partitioner p);

struct PartitionReport {
  Partitioner partitioner = Partitioner::Default;
  std::vector<std::string> saved;  // names of the saved tensors
  int64_t savedBytes = 0;          // symbolic dims count as kSymbolicDimEstimate elements each
  size_t recomputedOps = 0;        // forward ops that the backward graph computes again
  std::vector<NodeId> recomputed;  // their joint-graph ids
  // "partitioner mincut: 4 saved tensors, 8193024 bytes saved, 11 ops recomputed in the backward\n  saved: y logits ..."
  std::string str() const;
};

struct Partition {
  Graph forward;
  Graph backward;
  PartitionReport report;
};

constexpr int64_t kSymbolicDimEstimate = 64;

Partition partitionJointGraph(const JointGraph& joint, Partitioner partitioner);

// Bytes of a tensor of this type (symbolic dims estimated, as in the report).
int64_t estimatedBytes(const TensorType& t);

}  // namespace fusebox

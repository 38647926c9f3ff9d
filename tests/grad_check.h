// Gradient checks against central finite differences in float64, and the forward/backward
// split checked against the joint graph. Shared by the per-op and the per-model tests.
#pragma once

#include <string>
#include <vector>

#include "core/autograd/joint_graph.h"
#include "core/autograd/partition.h"
#include "core/interp/tensor.h"

namespace fusebox::test {

struct GradCheck {
  double worstRelError = 0;  // |fd - analytic| / max(|fd|, |analytic|, 1e-3), worst over targets
  std::string worstTarget;
  size_t targets = 0;
};

// Random tangents for every tangent input of `joint`, appended to `primals`.
std::vector<Tensor> jointInputs(const JointGraph& joint, const std::vector<Tensor>& primals, uint64_t seed);

// For each gradient output: compares <grad, v> with the central difference of
// <forward outputs, tangents> in a random direction v.
GradCheck checkGradients(const Graph& forward, const JointGraph& joint, const std::vector<Tensor>& primals,
                         uint64_t seed, int directions = 1);

// Largest difference between the joint graph's outputs and those of the partitioned graphs.
double partitionMismatch(const JointGraph& joint, const Partition& part, const std::vector<Tensor>& jointIn);

}  // namespace fusebox::test

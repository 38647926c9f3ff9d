#include "grad_check.h"

#include <algorithm>
#include <cmath>

#include "core/interp/interpreter.h"
#include "core/interp/random.h"

namespace fusebox::test {

namespace {

Tensor randomLike(const TensorType& t, Rng& rng) {
  Tensor x(t.dtype, concreteSizes(t.shape));
  for (double& v : x.data) v = rng.normal();
  return x;
}

double dot(const Tensor& a, const Tensor& b) {
  double s = 0;
  for (size_t i = 0; i < a.data.size(); ++i) s += a.data[i] * b.data[i];
  return s;
}

}  // namespace

std::vector<Tensor> jointInputs(const JointGraph& joint, const std::vector<Tensor>& primals, uint64_t seed) {
  std::vector<Tensor> in = primals;
  Rng rng(seed ^ 0x7A11);
  const Graph& g = joint.graph;
  for (size_t i = primals.size(); i < g.inputs().size(); ++i) in.push_back(randomLike(g.type(g.inputs()[i].value), rng));
  return in;
}

GradCheck checkGradients(const Graph& forward, const JointGraph& joint, const std::vector<Tensor>& primals,
                         uint64_t seed, int directions) {
  std::vector<Tensor> in = jointInputs(joint, primals, seed);
  std::vector<Tensor> outs = interpret(joint.graph, in, Precision::Float64);
  // The tangent of each differentiable forward output, by output index.
  std::vector<const Tensor*> tangentOf(joint.numForwardOutputs, nullptr);
  size_t t = primals.size();
  for (size_t i = 0; i < joint.numForwardOutputs && t < in.size(); ++i)
    if (isFloating(forward.type(forward.outputs()[i]).dtype)) tangentOf[i] = &in[t++];
  auto objective = [&](const std::vector<Tensor>& p) {
    std::vector<Tensor> o = interpret(forward, p, Precision::Float64);
    double s = 0;
    for (size_t i = 0; i < o.size(); ++i)
      if (tangentOf[i]) s += dot(o[i], *tangentOf[i]);
    return s;
  };
  GradCheck result;
  Rng rng(seed * 31 + 1);
  for (size_t k = 0; k < joint.gradOf.size(); ++k) {
    size_t inputIndex = 0;
    while (forward.inputs()[inputIndex].value != joint.gradOf[k]) ++inputIndex;
    const Tensor& grad = outs[joint.numForwardOutputs + k];
    for (int d = 0; d < directions; ++d) {
      Tensor v = randomLike(forward.type(joint.gradOf[k]), rng);
      const double eps = 1e-6;
      std::vector<Tensor> plus = primals, minus = primals;
      for (size_t i = 0; i < v.data.size(); ++i) {
        plus[inputIndex].data[i] += eps * v.data[i];
        minus[inputIndex].data[i] -= eps * v.data[i];
      }
      double fd = (objective(plus) - objective(minus)) / (2 * eps);
      double analytic = dot(grad, v);
      double rel = std::fabs(fd - analytic) / std::max({std::fabs(fd), std::fabs(analytic), 1e-3});
      if (rel >= result.worstRelError) {
        result.worstRelError = rel;
        result.worstTarget = forward.value(joint.gradOf[k]).name + " (fd " + std::to_string(fd) + " vs analytic " +
                             std::to_string(analytic) + ")";
      }
    }
    ++result.targets;
  }
  return result;
}

double partitionMismatch(const JointGraph& joint, const Partition& part, const std::vector<Tensor>& jointIn) {
  std::vector<Tensor> expected = interpret(joint.graph, jointIn, Precision::Float64);
  size_t numPrimals = part.forward.inputs().size();
  std::vector<Tensor> primals(jointIn.begin(), jointIn.begin() + numPrimals);
  std::vector<Tensor> fwd = interpret(part.forward, primals, Precision::Float64);
  std::vector<Tensor> bwIn(fwd.begin() + joint.numForwardOutputs, fwd.end());  // saved tensors
  bwIn.insert(bwIn.end(), jointIn.begin() + numPrimals, jointIn.end());      // tangents
  std::vector<Tensor> grads = interpret(part.backward, bwIn, Precision::Float64);
  double worst = 0;
  for (size_t i = 0; i < joint.numForwardOutputs; ++i) worst = std::max(worst, compareTensors(fwd[i], expected[i]).maxAbs);
  for (size_t i = 0; i < grads.size(); ++i)
    worst = std::max(worst, compareTensors(grads[i], expected[joint.numForwardOutputs + i]).maxAbs);
  return worst;
}

}  // namespace fusebox::test

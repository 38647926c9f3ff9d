#include <array>
#include <cmath>
#include <tuple>

#include "core/ops/binary_math.h"
#include "core/interp/kernels.h"
#include "core/interp/random.h"
#include "core/ops/unary_math.h"

namespace fusebox {

namespace {

template <class F>
Kernel unaryKernel(F f) {
  return [f](const KernelCall& c) {
    Tensor out = c.output();
    const auto& x = c.x().data;
    for (size_t i = 0; i < x.size(); ++i) out.data[i] = f(x[i]);
    return out;
  };
}

// Applies f to broadcast operands: f(values of each input at the broadcast position).
template <size_t N, class F>
Kernel broadcastKernel(F f) {
  return [f](const KernelCall& c) {
    Tensor out = c.output();
    std::array<std::vector<int64_t>, N> offs;
    for (size_t k = 0; k < N; ++k) offs[k] = broadcastOffsets(c.x(k).sizes, c.outSizes);
    for (size_t i = 0; i < out.data.size(); ++i) {
      std::array<double, N> v;
      for (size_t k = 0; k < N; ++k) v[k] = c.x(k).data[offs[k][i]];
      out.data[i] = std::apply(f, v);
    }
    return out;
  };
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

void addElementwiseKernels(KernelTable& t) {
  for (const UnaryMath& u : unaryMathOps()) t[u.name] = unaryKernel(u.eval);
  t["relu"] = unaryKernel([](double x) { return x > 0 ? x : 0.0; });
  t["sigmoid"] = unaryKernel(sigmoid);
  t["silu"] = unaryKernel([](double x) { return x * sigmoid(x); });
  t["gelu"] = [](const KernelCall& c) {
    bool tanhForm = c.s("approximate") == "tanh";
    return unaryKernel([tanhForm](double x) {
      if (tanhForm) return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
      return 0.5 * x * (1.0 + std::erf(x * 0.7071067811865476));
    })(c);
  };

  for (const BinaryMath& b : binaryMathOps())
    if (b.torchOp) t[b.name] = broadcastKernel<2>(b.eval);
  t["where"] = broadcastKernel<3>([](double c, double a, double b) { return c != 0.0 ? a : b; });
  t["masked_fill"] = [](const KernelCall& c) {
    double value = c.f("value");
    return broadcastKernel<2>([value](double x, double m) { return m != 0.0 ? value : x; })(c);
  };
  t["to"] = unaryKernel([](double x) { return x; });  // the interpreter rounds to the output dtype
  t["full"] = [](const KernelCall& c) {
    Tensor out = c.output();
    std::fill(out.data.begin(), out.data.end(), c.f("value"));
    return out;
  };
  t["arange"] = [](const KernelCall& c) {
    Tensor out = c.output();
    for (size_t i = 0; i < out.data.size(); ++i) out.data[i] = static_cast<double>(i);
    return out;
  };
  t["dropout"] = [](const KernelCall& c) {
    Tensor out = c.output();
    double p = c.f("p");
    if (!c.b("training") || p == 0.0) {
      out.data = c.x().data;
      return out;
    }
    uint64_t seed = static_cast<uint64_t>(c.i("seed"));
    for (size_t i = 0; i < out.data.size(); ++i)
      out.data[i] = dropoutUniform(seed, i) >= p ? c.x().data[i] / (1.0 - p) : 0.0;
    return out;
  };
}

}  // namespace fusebox

// Kernels of the prim set. Prims with a torch op of the same semantics reuse its kernel.
#include "core/interp/kernels.h"
#include "core/interp/random.h"
#include "core/ops/binary_math.h"
#include "core/ops/extern_prims.h"
#include "core/ops/shape_rules.h"
#include "core/ops/unary_math.h"

namespace fusebox {

namespace {

// Walks `outer x len x inner` blocks of `sizes` around `dim`, calling f(outerIndex, k, innerIndex).
template <class F>
void forEachAlong(const std::vector<int64_t>& sizes, int64_t dim, F f) {
  AxisSplit s = splitAt(sizes, dim);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t k = 0; k < s.size; ++k)
      for (int64_t i = 0; i < s.inner; ++i) f(o, k, i);
}

}  // namespace

void addPrimKernels(KernelTable& t) {
  for (const UnaryMath& u : unaryMathOps()) t["prims." + u.name] = t.at(u.name);
  for (const BinaryMath& b : binaryMathOps())
    if (b.torchOp) t["prims." + b.name] = t.at(b.name);
  for (const char* op : {"where", "full", "sym_size", "permute", "cat", "reshape", "slice"}) t[std::string("prims.") + op] = t.at(op);
  // Externs share the torch op's kernel, except index_add (a prim only, below).
  for (const ExternPrim& e : externPrims())
    if (e.kind != ExternKind::IndexAdd) t[e.qualifiedName()] = t.at(e.prim);
  t["prims.convert_element_type"] = t.at("to");
  t["prims.iota"] = t.at("arange");

  t["prims.uniform_random"] = [](const KernelCall& c) {
    Tensor out = c.output();
    uint64_t seed = static_cast<uint64_t>(c.i("seed"));
    for (size_t i = 0; i < out.data.size(); ++i) out.data[i] = dropoutUniform(seed, i);
    return out;
  };
  t["prims.broadcast_in_dim"] = [](const KernelCall& c) {
    // Place the input's sizes at the broadcast dimensions (1 elsewhere), then broadcast.
    std::vector<int64_t> placed(c.outSizes.size(), 1);
    const auto& bd = c.ints("broadcast_dimensions");
    for (size_t i = 0; i < bd.size(); ++i) placed[bd[i]] = c.x().sizes[i];
    std::vector<int64_t> offs = broadcastOffsets(placed, c.outSizes);
    Tensor out = c.output();
    for (size_t i = 0; i < offs.size(); ++i) out.data[i] = c.x().data[offs[i]];
    return out;
  };
  t["prims.pad"] = [](const KernelCall& c) {
    const Tensor& x = c.x();
    int64_t dim = normalizeAxis(c.i("dim"), x.rank(), c.node.op);
    int64_t low = c.i("low"), stride = c.i("interior") + 1, outLen = c.outSizes[dim];
    Tensor out = c.output();
    std::fill(out.data.begin(), out.data.end(), c.f("value"));
    AxisSplit s = splitAt(x.sizes, dim);
    forEachAlong(x.sizes, dim, [&](int64_t o, int64_t k, int64_t i) {
      out.data[(o * outLen + low + k * stride) * s.inner + i] = x.data[(o * s.size + k) * s.inner + i];
    });
    return out;
  };
  t["prims.gather"] = [](const KernelCall& c) {
    const Tensor &x = c.x(0), &idx = c.x(1);
    int64_t dim = normalizeAxis(c.i("dim"), x.rank(), c.node.op);
    AxisSplit xs = splitAt(x.sizes, dim), is = splitAt(idx.sizes, dim);
    Tensor out = c.output();
    forEachAlong(idx.sizes, dim, [&](int64_t o, int64_t k, int64_t i) {
      int64_t j = static_cast<int64_t>(idx.data[(o * is.size + k) * is.inner + i]);
      if (j < 0 || j >= xs.size) c.fail("index " + std::to_string(j) + " is out of range for size " + std::to_string(xs.size));
      out.data[(o * is.size + k) * is.inner + i] = x.data[(o * xs.size + j) * xs.inner + i];
    });
    return out;
  };
  t["prims.index_select"] = [](const KernelCall& c) {
    const Tensor &x = c.x(0), &idx = c.x(1);
    int64_t dim = normalizeAxis(c.i("dim"), x.rank(), c.node.op);
    AxisSplit xs = splitAt(x.sizes, dim);
    Tensor out = c.output();
    forEachAlong(c.outSizes, dim, [&](int64_t o, int64_t k, int64_t i) {
      int64_t j = static_cast<int64_t>(idx.data[k]);
      if (j < 0 || j >= xs.size) c.fail("index " + std::to_string(j) + " is out of range for size " + std::to_string(xs.size));
      out.data[(o * idx.numel() + k) * xs.inner + i] = x.data[(o * xs.size + j) * xs.inner + i];
    });
    return out;
  };
  t["prims.index_add"] = [](const KernelCall& c) {
    const Tensor &x = c.x(0), &idx = c.x(1), &src = c.x(2);
    int64_t dim = normalizeAxis(c.i("dim"), x.rank(), c.node.op);
    AxisSplit xs = splitAt(x.sizes, dim);
    Tensor out = c.output();
    out.data = x.data;
    forEachAlong(src.sizes, dim, [&](int64_t o, int64_t k, int64_t i) {
      int64_t j = static_cast<int64_t>(idx.data[k]);
      if (j < 0 || j >= xs.size) c.fail("index " + std::to_string(j) + " is out of range for size " + std::to_string(xs.size));
      out.data[(o * xs.size + j) * xs.inner + i] += src.data[(o * idx.numel() + k) * xs.inner + i];
    });
    return out;
  };
}

}  // namespace fusebox

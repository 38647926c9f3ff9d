#include "core/loopir/loop_interp.h"

#include <cmath>

#include "core/interp/kernels.h"
#include "core/interp/random.h"
#include "core/ir/error.h"

namespace fusebox {

double evalLExpr(const LExpr& e, const std::map<std::string, int64_t>& vars,
                 const std::map<std::string, const Tensor*>& buffers) {
  auto arg = [&](size_t i) { return evalLExpr(*e.args[i], vars, buffers); };
  auto round = [&](double v) { return roundToDType(v, e.dtype); };
  switch (e.kind) {
    case LExpr::Kind::Load:
    case LExpr::Kind::LoadIndirect: {
      const Tensor& t = *buffers.at(e.buffer);
      int64_t i = e.index.evaluate(vars);
      if (e.kind == LExpr::Kind::LoadIndirect) {
        double v = arg(0);
        if (!(v >= 0 && v < static_cast<double>(e.extent)))
          throw Error("loop IR: index " + std::to_string(static_cast<int64_t>(v)) + " into " + e.buffer + " is out of range [0, " +
                      std::to_string(e.extent) + ")");
        i += e.stride * static_cast<int64_t>(v);
      }
      if (i < 0 || i >= t.numel()) throw Error("loop IR: load of " + e.buffer + " at " + std::to_string(i) + " is out of bounds");
      return t.data[i];
    }
    case LExpr::Kind::Constant: return round(e.value);
    case LExpr::Kind::Index: return static_cast<double>(e.index.evaluate(vars));
    case LExpr::Kind::Random: return dropoutUniform(static_cast<uint64_t>(e.seed), static_cast<uint64_t>(e.index.evaluate(vars)));
    case LExpr::Kind::Cast: return round(arg(0));
    case LExpr::Kind::Where: return arg(0) != 0 ? arg(1) : arg(2);
    case LExpr::Kind::Unary: return round(unaryMath(e.unaryOp).eval(arg(0)));
    case LExpr::Kind::Binary: return round(binaryMath(e.binaryOp).eval(arg(0), arg(1)));
  }
  return NAN;
}

Tensor runExternReference(const LoopNode& n, const LoopProgram& p, const std::vector<const Tensor*>& inputs) {
  const Buffer& out = p.buffer(n.output);
  Node fake;
  fake.op = externPrim(n.externOp).qualifiedName();
  fake.attrs = n.externAttrs;
  fake.attrs.erase("transpose_a");
  fake.attrs.erase("transpose_b");
  std::vector<Tensor> owned;
  owned.reserve(inputs.size() + 2);
  std::vector<const Tensor*> args = inputs;
  for (size_t i = 0; i < inputs.size(); ++i)  // give each input its logical shape
    if (inputs[i]->sizes != n.externInputSizes[i]) {
      owned.push_back(Tensor(inputs[i]->dtype, n.externInputSizes[i], inputs[i]->data));
      args[i] = &owned.back();
    }
  for (const char* key : {"transpose_a", "transpose_b"}) {  // materialize in-place transposes
    if (!n.externAttrs.count(key)) continue;
    size_t i = std::string(key) == "transpose_a" ? 0 : 1;
    const Tensor& t = *args[i];
    std::vector<int64_t> sizes = t.sizes;
    size_t r = sizes.size();
    std::swap(sizes[r - 1], sizes[r - 2]);
    Tensor tt(t.dtype, sizes);
    int64_t rows = t.sizes[r - 2], cols = t.sizes[r - 1], batch = t.numel() / (rows * cols);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i0 = 0; i0 < rows; ++i0)
        for (int64_t j = 0; j < cols; ++j) tt.data[(b * cols + j) * rows + i0] = t.data[(b * rows + i0) * cols + j];
    owned.push_back(std::move(tt));
  }
  size_t k = owned.size() - (n.externAttrs.count("transpose_a") + n.externAttrs.count("transpose_b"));
  for (const char* key : {"transpose_a", "transpose_b"})
    if (n.externAttrs.count(key)) args[std::string(key) == "transpose_a" ? 0 : 1] = &owned[k++];
  const auto& table = kernelTable();
  auto it = table.find(fake.op);
  if (it == table.end()) throw Error("loop IR: no reference kernel for extern " + fake.op);
  Tensor r = it->second(KernelCall(fake, args, out.layout.sizes, out.dtype));
  for (double& v : r.data) v = roundToDType(v, out.dtype);
  return r;
}

std::vector<Tensor> interpretLoops(const LoopProgram& p, const std::vector<Tensor>& inputs) {
  std::map<std::string, Tensor> store;
  std::map<std::string, const Tensor*> view;
  for (size_t i = 0; i < p.inputs.size(); ++i) view[p.inputs[i]] = &inputs.at(i);
  for (const LoopNode& n : p.nodes) {
    const Buffer& b = p.buffer(n.output);
    Tensor out(b.dtype, b.layout.sizes);
    if (n.kind == LoopNode::Kind::Extern) {
      std::vector<const Tensor*> args;
      for (const std::string& in : n.externInputs) args.push_back(view.at(in));
      out = runExternReference(n, p, args);
    } else {
      std::map<std::string, int64_t> vars;
      int64_t rn = n.reductionNumel();
      for (int64_t o = 0; o < n.numel(); ++o) {
        int64_t rem = o;
        for (size_t v = n.vars.size(); v-- > 0;) vars[n.vars[v].name] = rem % n.vars[v].size, rem /= n.vars[v].size;
        if (n.kind == LoopNode::Kind::Pointwise) {
          out.data[o] = roundToDType(evalLExpr(*n.body, vars, view), b.dtype);
          continue;
        }
        const ReductionMath& reduce = reductionMath(n.reduceOp);
        double acc = reduce.identity;
        for (int64_t r = 0; r < rn; ++r) {
          int64_t rr = r;
          for (size_t v = n.reduceVars.size(); v-- > 0;)
            vars[n.reduceVars[v].name] = rr % n.reduceVars[v].size, rr /= n.reduceVars[v].size;
          double x = evalLExpr(*n.body, vars, view);
          acc = reduce.step(acc, x);
        }
        out.data[o] = roundToDType(acc, b.dtype);
      }
    }
    store[n.output] = std::move(out);
    view[n.output] = &store[n.output];
  }
  std::vector<Tensor> outs;
  for (const std::string& o : p.outputs) outs.push_back(*view.at(o));
  return outs;
}

}  // namespace fusebox

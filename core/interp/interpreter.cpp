#include "core/interp/interpreter.h"

#include <cmath>

#include "core/interp/kernels.h"
#include "core/interp/random.h"
#include "core/ir/memory_budget.h"
#include "core/ir/verifier.h"

namespace fusebox {

static std::string sizesStr(const std::vector<int64_t>& s) { return shapeStr(shapeOf(s)); }

std::vector<Tensor> interpret(const Graph& g, const std::vector<Tensor>& inputs, Precision precision) {
  if (inputs.size() != g.inputs().size())
    throw Error("graph '" + g.name + "' takes " + std::to_string(g.inputs().size()) + " inputs, got " +
                std::to_string(inputs.size()));
  std::vector<const Tensor*> env(g.values().size(), nullptr);
  std::vector<Tensor> produced(g.values().size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = g.value(g.inputs()[i].value);
    if (!isConcrete(v.type.shape))
      throw Error("input '" + v.name + "' has symbolic shape " + shapeStr(v.type.shape) + "; bind its dims before running");
    if (inputs[i].sizes != concreteSizes(v.type.shape) || inputs[i].dtype != v.type.dtype)
      throw Error("input '" + v.name + "' expects " + v.type.str() + ", got " + std::string(dtypeName(inputs[i].dtype)) +
                  sizesStr(inputs[i].sizes));
    env[v.id] = &inputs[i];
  }
  int64_t held = 0;  // bytes of every tensor alive during the run (the interpreter keeps them all)
  for (const Tensor& t : inputs) held += interpreterBytes(t.sizes).value_or(0);
  const KernelTable& kernels = kernelTable();
  for (const Node& n : g.nodes()) {
    auto k = kernels.find(n.op);
    if (k == kernels.end()) throw Error(describeNode(n) + ": the interpreter has no kernel for op '" + n.op + "'");
    std::vector<const Tensor*> args;
    for (ValueId v : n.inputs) args.push_back(env.at(v));
    for (ValueId out : n.outputs) {
      const TensorType& t = g.type(out);
      if (!isConcrete(t.shape)) throw Error(describeNode(n) + ": output shape " + shapeStr(t.shape) + " is symbolic");
      std::vector<int64_t> sizes = concreteSizes(t.shape);
      std::optional<int64_t> bytes = interpreterBytes(sizes);
      checkMemory(bytes, "node '" + g.value(out).name + "' (" + n.op + ")", t.str() + " (the interpreter holds 8 bytes per element)",
                  n.loc, held);
      held += *bytes;
      Tensor result = k->second(KernelCall(n, args, sizes, t.dtype));
      if (result.sizes != sizes || result.numel() != numelOf(sizes))
        throw Error(describeNode(n) + ": kernel produced " + sizesStr(result.sizes) + ", expected " + sizesStr(sizes));
      result.dtype = t.dtype;
      if (precision == Precision::Native || !isFloating(t.dtype))
        for (double& x : result.data) x = roundToDType(x, t.dtype);
      produced[out] = std::move(result);
      env[out] = &produced[out];
    }
  }
  std::vector<Tensor> outs;
  for (ValueId v : g.outputs()) outs.push_back(*env.at(v));
  return outs;
}

Tensor makeTensor(const TensorType& type, const InitSpec& init, uint64_t seed, uint64_t stream) {
  Tensor t(type.dtype, concreteSizes(type.shape));
  if (init.kind == InitSpec::Kind::Values) {
    if (!init.values || static_cast<int64_t>(init.values->size()) != t.numel())
      throw Error("given values do not match " + type.str());
    t.data = *init.values;
    return t;
  }
  Rng rng(splitmix64(stream) ^ (init.seed * 0x100000001B3ull + seed));
  for (double& x : t.data) {
    switch (init.kind) {
      case InitSpec::Kind::Randn: x = rng.normal() * init.a; break;
      case InitSpec::Kind::Uniform: x = init.a + (init.b - init.a) * rng.uniform(); break;
      case InitSpec::Kind::Zeros: x = 0; break;
      case InitSpec::Kind::Ones: x = 1; break;
      case InitSpec::Kind::Full: x = init.a; break;
      case InitSpec::Kind::Values: break;  // returned above
    }
    if (isInteger(type.dtype)) x = std::floor(x);
    x = roundToDType(x, type.dtype);
  }
  return t;
}

std::vector<Tensor> makeInputs(const Graph& g, uint64_t seed) {
  std::vector<Tensor> out;
  int64_t held = 0;
  for (const GraphInput& in : g.inputs()) {
    const Value& v = g.value(in.value);
    if (!isConcrete(v.type.shape))
      throw Error("input '" + v.name + "' has symbolic shape " + shapeStr(v.type.shape) + "; bind its dims (e.g. --dim B=8)");
    // Parameters keep their declared init whatever the run seed, like loading a checkpoint.
    uint64_t stream = 0xcbf29ce484222325ull;  // FNV-1a of the name
    for (unsigned char ch : v.name) stream = (stream ^ ch) * 0x100000001B3ull;
    std::optional<int64_t> bytes = interpreterBytes(concreteSizes(v.type.shape));
    checkMemory(bytes, std::string(in.role == InputRole::Param ? "parameter '" : "input '") + v.name + "'",
                v.type.str() + " (the interpreter holds 8 bytes per element)", {}, held);
    held += *bytes;
    out.push_back(makeTensor(v.type, in.init, in.role == InputRole::Param ? 0 : seed, stream));
  }
  return out;
}

}  // namespace fusebox

// The vocabulary of decompositions (torch-level op -> prims), for the per-family files that
// register them (decompose_elementwise.cpp, decompose_reduction.cpp, decompose_nn.cpp,
// decompose_shape.cpp), as the registry's ops_*.cpp register schemas.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/ops/graph_builder.h"
#include "core/ops/op_schema.h"
#include "core/ops/shape_rules.h"

namespace fusebox {

using Ints = std::vector<int64_t>;

// What a decomposition sees: the torch node, its inputs in the new graph, and prim helpers.
class Decomp {
public:
  Decomp(GraphBuilder& b, const Node& n, std::vector<ValueId> ins, TensorType outType)
      : b_(b), node_(n), ins_(std::move(ins)), outType_(std::move(outType)) {}

  ValueId in(size_t i) const { return ins_.at(i); }
  size_t numInputs() const { return ins_.size(); }
  // By value: emitting nodes grows the graph's value table, so references would dangle.
  Shape shape(ValueId v) const { return b_.type(v).shape; }
  DType dtype(ValueId v) const { return b_.type(v).dtype; }
  const TensorType& outType() const { return outType_; }
  AttrReader a() const { return AttrReader{node_.attrs}; }
  const AttrMap& attrs() const { return node_.attrs; }
  const std::string& op() const { return node_.op; }

  ValueId p(const std::string& prim, const std::vector<ValueId>& inputs, AttrMap attrs = {}) {
    return b_.emit("prims." + prim, inputs, std::move(attrs));
  }
  ValueId scalar(double v, DType t) { return b_.scalar(v, t); }
  ValueId size(const Dim& d, DType t) {
    if (d.isConstant()) return scalar(static_cast<double>(d.value()), t);
    return p("sym_size", {}, {{"size", d}, {"dtype", std::string(dtypeName(t))}});
  }
  // Numpy-style (trailing-aligned) broadcast made explicit.
  ValueId bcast(ValueId v, const Shape& to) {
    const Shape from = shape(v);
    if (from == to) return v;
    Ints dims;
    for (size_t i = 0; i < from.size(); ++i) dims.push_back(static_cast<int64_t>(to.size() - from.size() + i));
    return p("broadcast_in_dim", {v}, {{"shape", to}, {"broadcast_dimensions", dims}});
  }
  ValueId binary(const std::string& prim, ValueId x, ValueId y) {
    Shape s = broadcastShapes(shape(x), shape(y), prim);
    return p(prim, {bcast(x, s), bcast(y, s)});
  }
  ValueId withScalar(const std::string& prim, ValueId x, double c) { return binary(prim, x, scalar(c, dtype(x))); }
  ValueId unary(const std::string& prim, ValueId x) { return p(prim, {x}); }
  ValueId reshape(ValueId x, const Shape& s) { return shape(x) == s ? x : p("reshape", {x}, {{"shape", s}}); }
  // Reduction over `axes` (normalized, sorted); keepdim re-adds them as size 1.
  ValueId reduce(const std::string& prim, ValueId x, const Ints& axes, bool keepdim) {
    if (axes.empty()) return x;
    ValueId r = p(prim, {x}, {{"dims", axes}});
    return keepdim ? reshape(r, reducedShape(shape(x), axes, true)) : r;
  }
  ValueId mean(ValueId x, const Ints& axes, bool keepdim) {
    Dim n(1);
    for (int64_t ax : axes) n = n * shape(x)[ax];
    return binary("div", reduce("sum", x, axes, keepdim), size(n, dtype(x)));
  }
  ValueId where(ValueId c, ValueId x, ValueId y) {
    Shape s = broadcastShapes(broadcastShapes(shape(x), shape(y), "where"), shape(c), "where");
    return p("where", {bcast(c, s), bcast(x, s), bcast(y, s)});
  }
  ValueId cast(ValueId x, DType t) {
    return dtype(x) == t ? x : p("convert_element_type", {x}, {{"dtype", std::string(dtypeName(t))}});
  }
  ValueId transposeLast(ValueId x) {
    Ints perm;
    for (size_t i = 0; i < shape(x).size(); ++i) perm.push_back(static_cast<int64_t>(i));
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    return p("permute", {x}, {{"dims", perm}});
  }
  ValueId sigmoid(ValueId x) {
    ValueId e = unary("exp", unary("neg", x));
    return binary("div", scalar(1, dtype(x)), withScalar("add", e, 1));
  }
  // Stable softmax pieces along `dim`: (x - max, log(sum(exp(x - max)))) with keepdim shapes.
  std::pair<ValueId, ValueId> shiftedAndLogSum(ValueId x, int64_t dim) {
    ValueId shifted = binary("sub", x, reduce("amax", x, {dim}, true));
    ValueId logSum = unary("log", reduce("sum", unary("exp", shifted), {dim}, true));
    return {shifted, logSum};
  }
  ValueId matmul(ValueId x, ValueId y);  // torch.matmul semantics on prims.matmul
  // prims.matmul of [.., M, K] x [.., K, N] with equal batch dims; other dtypes than f32 (which the
  // GEMM externs lack) as a broadcast product summed over K.
  ValueId matmulPrim(ValueId x, ValueId y);

private:
  GraphBuilder& b_;
  const Node& node_;
  std::vector<ValueId> ins_;
  TensorType outType_;
};

using DecompFn = std::function<ValueId(Decomp&)>;
using DecompTable = std::map<std::string, DecompFn>;

void addElementwiseDecompositions(DecompTable& t);
void addReductionDecompositions(DecompTable& t);
void addMatmulDecompositions(DecompTable& t);
void addNormDecompositions(DecompTable& t);
void addNnDecompositions(DecompTable& t);
void addShapeDecompositions(DecompTable& t);

}  // namespace fusebox

// Stage 4's IR (Inductor-style): buffers with layouts, and nodes whose bodies are small
// expression trees over symbolic index variables.
//
//   Pointwise  out[x0, x1, ...] = body(x0, x1, ...)
//   Reduction  out[x0, ...] = reduce_{r0, ...} body(x0, ..., r0, ...)   (sum / max / min)
//   Extern     a library call (matmul, convolution, pooling, scatter-add) on whole buffers
//
// Views never copy: a reshape/permute/broadcast/slice becomes index arithmetic in the loads
// of whoever reads it. Shapes are concrete here (trace with concrete dims before lowering).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/attr.h"
#include "core/ir/dtype.h"
#include "core/ir/graph.h"
#include "core/loopir/index_expr.h"
#include "core/ops/binary_math.h"
#include "core/ops/extern_prims.h"
#include "core/ops/reduction_math.h"
#include "core/ops/unary_math.h"

namespace fusebox {

struct Layout {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t offset = 0;
  static Layout contiguous(const std::vector<int64_t>& sizes);
  int64_t numel() const;
};

struct Buffer {
  enum class Kind { Input, Intermediate, Output };
  std::string name;  // "buf3", or the graph input's name
  DType dtype = DType::F32;
  Layout layout;
  Kind kind = Kind::Intermediate;
  int64_t bytes() const { return layout.numel() * dtypeBytes(dtype); }
};

// A value expression of a node body. Immutable, shared.
struct LExpr;
using LExprPtr = std::shared_ptr<const LExpr>;

struct LExpr {
  enum class Kind {
    Load,          // buffer[index]
    LoadIndirect,  // buffer[index + stride * (int)indexValue]  (gather, index_select)
    Constant,      // value
    Index,         // the integer value of an index expression (iota, masks)
    Unary,         // unaryOp (core/ops/unary_math.def)
    Binary,        // binaryOp (core/ops/binary_math.def)
    Where,         // args[0] ? args[1] : args[2]
    Cast,          // to dtype
    Random,        // uniform [0, 1) from hash(seed, index)
  };
  Kind kind = Kind::Constant;
  DType dtype = DType::F32;  // dtype of the result
  std::string buffer;        // Load / LoadIndirect: the buffer read
  UnaryOp unaryOp{};         // Unary
  BinaryOp binaryOp{};       // Binary
  double value = 0;          // Constant
  int64_t seed = 0;          // Random
  int64_t stride = 0;        // LoadIndirect: stride of the gathered dimension
  int64_t extent = 0;        // LoadIndirect: its size; an index outside [0, extent) is an error
  IndexExpr index;           // Load / LoadIndirect (base) / Index / Random
  std::vector<LExprPtr> args;

  static LExprPtr load(const std::string& buffer, DType t, IndexExpr index);
  // buffer[base + stride * (int)value], value in [0, extent)
  static LExprPtr loadIndirect(const std::string& buffer, DType t, IndexExpr base, int64_t stride, int64_t extent, LExprPtr value);
  static LExprPtr constant(double v, DType t);
  static LExprPtr unary(UnaryOp op, LExprPtr a, DType t);
  static LExprPtr binary(BinaryOp op, LExprPtr a, LExprPtr b, DType t);
  static LExprPtr where(LExprPtr c, LExprPtr a, LExprPtr b);
  static LExprPtr cast(LExprPtr a, DType t);
  static LExprPtr indexValue(IndexExpr e, DType t);

  // Every buffer read, with the index it is read at.
  void collectLoads(std::vector<std::pair<std::string, IndexExpr>>& out) const;
  // Whether `buffer` is read at a data-dependent index somewhere in this expression (a gather).
  bool readsIndirectly(const std::string& buffer) const;
  int countOps() const;
  LExprPtr substitute(const std::map<std::string, IndexExpr>& vars) const;
  std::string str() const;  // "exp(load(buf2, 64*x0 + x1) - load(buf3, x0))"
};

// How deep an expression tree is (a leaf is 1) and how many nodes it has, a subtree shared by
// several parents counted once per parent (as every walker over LExpr visits it). Iterative;
// stops counting at `cap` nodes, so a DAG with exponentially many paths costs at most `cap`.
struct ExprExtent {
  int depth = 0;
  int64_t nodes = 0;
};
ExprExtent exprExtent(const LExpr& e, int64_t cap = int64_t{1} << 20);

struct LoopVar {
  std::string name;  // x0, x1, ... (output dims) or r0, r1, ... (reduced dims)
  int64_t size;
};

// One prim folded into a loop node. Recomputed: it comes from a forward op that the backward
// computes again instead of loading a saved tensor (Node::recomputed).
struct PrimUse {
  std::string op;  // "prims.add"
  bool recomputed = false;
  bool operator==(const PrimUse&) const = default;
};

struct LoopNode {
  enum class Kind { Pointwise, Reduction, Extern };
  int id = 0;               // position in LoopProgram::nodes
  Kind kind = Kind::Pointwise;
  std::string output;       // the buffer it writes
  std::vector<LoopVar> vars;        // output iteration variables
  std::vector<LoopVar> reduceVars;  // Reduction only
  ReduceOp reduceOp{};              // Reduction
  LExprPtr body;                    // Pointwise / Reduction
  ExternOp externOp{};              // Extern: the prim it calls
  std::vector<std::string> externInputs;
  // Sizes each input is read with (buffers may be stored flat); with transpose_a/b set, the
  // operand is the transpose (last two dims) of the input read with these sizes.
  std::vector<std::vector<int64_t>> externInputSizes;
  AttrMap externAttrs;
  std::vector<NodeId> provenance;   // traced-node ids (from the prim graph)
  std::vector<PrimUse> prims;       // the prim ops folded into this node, in order
  std::string scope;

  std::vector<std::string> reads() const;  // buffers read, without duplicates
  int64_t numel() const;                   // output elements
  int64_t reductionNumel() const;          // 1 for non-reductions
  std::string str() const;
};

struct LoopProgram {
  std::string name;
  std::vector<Buffer> buffers;
  std::vector<LoopNode> nodes;         // topological order
  std::vector<std::string> inputs;     // one buffer per graph input, in order
  std::vector<std::string> outputs;    // one buffer per graph output, in order (may repeat or be an input)

  const Buffer& buffer(const std::string& name) const;
  const LoopNode* producer(const std::string& buffer) const;
  std::string str() const;
};

}  // namespace fusebox

// What the CPU and CUDA printers share: C types and literals of the generated code, the
// expression emitter (one temporary per distinct subexpression, loads of values computed earlier
// in the same kernel replaced by their registers), and the reduction helpers.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/codegen/source_text.h"
#include "core/loopir/loop_ir.h"
#include "core/schedule/schedule.h"

namespace fusebox {

// How generated code names a program's buffers ("fc1.weight" -> "b_fc1_weight": unique, made of
// [A-Za-z0-9_] whatever the model named them; every other generated name has another prefix),
// and each one's element count by that name, for static bounds checks of loads.
struct BufferNames {
  explicit BufferNames(const LoopProgram& p);
  const std::string& operator()(const std::string& buffer) const { return ids(buffer); }
  IdentifierTable ids;
  std::map<std::string, int64_t> elements;  // by C identifier
  std::map<std::string, DType> dtypes;      // by C identifier
};

// Whether every element `e` addresses, for `width` consecutive elements, lies in [0, elements).
bool alwaysInBounds(const IndexExpr& e, int64_t elements, int64_t width = 1);

// f16/bf16 values compute in float and every op's result is rounded to its type, as the
// interpreter computes (Inductor's emulate_precision_casts): a value recomputed in a backward
// kernel then equals the one stored, which comparisons against stored maxima rely on.
std::string ctype(DType t);         // a value of type t in an expression (f16/bf16 compute as float)
std::string storageCType(DType t);  // an element of a buffer of type t (f16/bf16: fb_f16, fb_bf16)
std::string literal(double v, DType t);

class KernelEmitter {
public:
  KernelEmitter(std::ostringstream& os, const BufferNames& ids) : os_(os), ids_(ids) {}
  // Emits `e`, an expression of node `n` (its body, or a part of it), and returns the register or
  // literal holding its value. Data-dependent indices are range-checked; a fault names `n`.
  std::string emit(const LoopNode& n, const LExprPtr& e, const std::map<std::string, IndexExpr>& vars, const std::string& indent);
  const BufferNames& ids() const { return ids_; }
  void resetCse() { cse_.clear(); }
  void publish(const std::string& buffer, const std::string& name, bool perElement);
  // A finished reduction's accumulator as later items read it: rounded to its buffer's type when
  // that is f16/bf16 (it accumulates in f32), as the stored value reads back.
  void publishAccumulator(const std::string& buffer, const std::string& acc);
  void forgetPerElement();
  // Reads of `load` ("b_x[k + 64*m]", as the emitter prints it) use the register `name` instead
  // (an element of a vector load, or a row cached in registers).
  void alias(const std::string& load, const std::string& name) { aliases_[load] = name; }
  void clearAliases() { aliases_.clear(); }

private:
  std::string emitExpr(const LExprPtr& e, const std::map<std::string, IndexExpr>& vars, const std::string& indent);
  std::string compute(const LExprPtr& e, const std::vector<std::string>& kids, const std::map<std::string, IndexExpr>& vars);
  // A select whose branches may read outside their buffers where not selected (cat, pad): each
  // branch is computed only when chosen.
  std::string emitGuardedWhere(const LExprPtr& e, const std::map<std::string, IndexExpr>& vars, const std::string& indent);
  bool mayReadOutOfBounds(const LExprPtr& e, const std::map<std::string, IndexExpr>& vars) const;

  std::ostringstream& os_;
  const BufferNames& ids_;
  int site_ = 0;  // the loop node whose expression is being emitted
  std::map<std::string, std::string> cse_;
  std::map<std::string, std::string> published_;
  std::set<std::string> perElement_;
  std::map<std::string, std::string> aliases_;
  int temp_ = 0;
};

int64_t coefficientOf(const IndexExpr& e, const std::string& var);
IndexExpr storeIndexOf(const LoopNode& n);
std::string reduceInit(const LoopNode& n, DType t);
std::string reduceCombine(const LoopNode& n, const std::string& acc, const std::string& v);
// Column reductions (the reduced dim is the outer one in memory, e.g. a bias gradient summed over
// rows) walk memory with a large stride along k; advancing consecutive rows m together makes the
// innermost accesses contiguous (a vectorized loop on the CPU, coalesced threads on the GPU).
bool prefersColumnLoop(const LoopProgram& p, const Kernel& k, int64_t M, int64_t K);
// The inner extent K of a kernel of pointwise nodes only, tiled as M/K rows of K contiguous
// elements: the widest product of trailing dims (up to `cap` elements) at which every load and
// store is k plus a term of m, with no division or modulo of k, so the inner loop is long and
// vectorizes (a per-channel operand becomes invariant in k); else the innermost dim, as before.
int64_t pointwiseInnerExtent(const LoopProgram& p, const Kernel& k, int64_t cap);
// "n3 buf3 [ln] from layer_norm @m.fbx:6:9": how generated code comments and run-time errors
// name a loop-IR node. Raw model text: pass it through commentText before it enters source.
std::string describeLoopNode(const LoopNode& n, const std::function<std::string(NodeId)>& describeTraced);
// The nodes whose generated code checks data-dependent indices (gathers, index_add), each with
// its description: a run-time index fault reports the node by id, the runtime names it from here.
std::map<int, std::string> indexCheckSites(const LoopProgram& p, const std::function<std::string(NodeId)>& describeTraced);

// Emits one per-point item of a loop body: a reduction's body folded into `acc` (the
// accumulator's name), or a pointwise value stored when `stored` and published for later items.
// `reassociableSums`: a sum's accumulation alone may be reassociated (clang's fp pragma), so the
// loop vectorizes it; nothing else is, so a value recomputed in two kernels has the same bits.
void emitLoopItem(std::ostringstream& body, KernelEmitter& em, const LoopNode& n, const std::map<std::string, IndexExpr>& vars,
                  const std::string& indent, bool stored, const std::string& acc, bool reassociableSums = false);


// Typed pointer declarations for every buffer a kernel touches in memory (registers-only buffers
// excluded), read from the buffer table `bufs` at their slots; `restrictWord` is "__restrict"
// (C++) or "__restrict__" (CUDA).
std::string bufferPointerDecls(const LoopProgram& p, const Kernel& k, const std::map<std::string, int>& slot,
                               const std::string& restrictWord, const BufferNames& ids);

}  // namespace fusebox

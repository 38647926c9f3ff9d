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

#include "core/loopir/loop_ir.h"
#include "core/schedule/schedule.h"

namespace fusebox {

std::string ctype(DType t);
std::string literal(double v, DType t);

class KernelEmitter {
public:
  explicit KernelEmitter(std::ostringstream& os) : os_(os) {}
  std::string emit(const LExprPtr& e, const std::map<std::string, IndexExpr>& vars, const std::string& indent);
  void resetCse() { cse_.clear(); }
  void publish(const std::string& buffer, const std::string& name, bool perElement);
  void forgetPerElement();
  // Reads of `load` ("b_x[k + 64*m]", as the emitter prints it) use the register `name` instead
  // (an element of a vector load, or a row cached in registers).
  void alias(const std::string& load, const std::string& name) { aliases_[load] = name; }
  void clearAliases() { aliases_.clear(); }

private:
  std::string compute(const LExprPtr& e, const std::vector<std::string>& kids, const std::map<std::string, IndexExpr>& vars);

  std::ostringstream& os_;
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
// "n3 buf3 [ln] from layer_norm @m.fbx:6:9": how generated code comments name a loop-IR node.
std::string describeLoopNode(const LoopNode& n, const std::function<std::string(NodeId)>& describeTraced);

// Emits one per-point item of a loop body: a reduction's body folded into `acc` (the
// accumulator's name), or a pointwise value stored when `stored` and published for later items.
void emitLoopItem(std::ostringstream& body, KernelEmitter& em, const LoopNode& n, const std::map<std::string, IndexExpr>& vars,
                  const std::string& indent, bool stored, const std::string& acc);

// Typed pointer declarations for every buffer a kernel touches in memory (registers-only buffers
// excluded), read from the buffer table `bufs` at their slots; `restrictWord` is "__restrict"
// (C++) or "__restrict__" (CUDA).
std::string bufferPointerDecls(const LoopProgram& p, const Kernel& k, const std::map<std::string, int>& slot,
                               const std::string& restrictWord);

// The C identifier of a buffer in generated code ("b_fc1_weight").
std::string cName(const std::string& buffer);
// A copy of `e` whose loads use cName(buffer).
LExprPtr withCNames(const LExprPtr& e);

}  // namespace fusebox

// A backend turns the scheduled loop IR into code for one target and runs it: generate (source
// with its kernels' line spans), compile (the artifacts a person inspects: LLVM IR and assembly,
// PTX), and run (N iterations, every kernel profiled, outputs checked against the interpreter).
// Every target is one row of one table (backends()); the rest of Fusebox names a target only
// through findBackend.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/codegen/generated_module.h"
#include "core/pipeline/pipeline.h"
#include "core/runtime/model_runner.h"

namespace fusebox {

struct CompiledArtifact {
  std::string kind;  // "llvm_ir", "asm", "ptx": the source kinds sessions store them under
  std::string text;
};

struct CompiledModule {
  std::vector<CompiledArtifact> artifacts;
  std::string log;  // one line for the compile log: the compiler, its options, whether cached
};

struct RunOptions {
  int iters = 1;
  uint64_t seed = 0;     // of the random inputs
  unsigned threads = 0;  // CPU worker threads (0: one per hardware thread)
  bool check = true;     // compare with the interpreter
  bool cudaGraphs = true;  // CUDA: time iterations replayed from a captured graph
  const RunData* data = nullptr;  // given inputs and expected outputs instead of random ones and the interpreter
};

class Backend {
public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;        // "cpu": --target, PipelineConfig::target, sessions
  virtual const char* language() const = 0;    // the kind its sources are stored and highlighted as: "cpp"
  virtual const char* title() const = 0;       // how the code view names its code: "C++"
  virtual const char* compilerName() const = 0;  // "LLVM", for messages
  virtual bool compilerAvailable() const = 0;    // whether this build has the compiler

  // `describe` names a traced node in comments (e.g. "linear @mlp.fbx:6:14"); may be empty.
  virtual GeneratedModule generate(const LoopProgram& p, const Schedule& s,
                                   const std::function<std::string(NodeId)>& describe) const = 0;
  // Throws Error with the compiler's diagnostics when the source does not compile.
  virtual CompiledModule compile(const GeneratedModule& m) const = 0;
  // The pipeline must have run through Stage::Codegen with concrete shapes. Throws Error naming
  // what is missing (no GPU, no compiler).
  virtual RunReport run(const Pipeline& p, const RunOptions& options, const RunHooks& hooks = {}) const = 0;
};

// Every backend, one per target, in the order the code views list them (cpu first: the default).
const std::vector<const Backend*>& backends();
// The backend of `target`; Error "unknown target 'x' (available: cpu, cuda)" for another name.
const Backend& findBackend(const std::string& target);
// "cpu or cuda": the targets in words, for messages.
std::string backendNames(const char* lastSeparator = " or ");

}  // namespace fusebox

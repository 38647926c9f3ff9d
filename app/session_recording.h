// The CLI's bridge to the session store: records a compile (every stage as it finishes), the
// backend compile's artifacts and log, and a run's live profile. Built without SQLite, using a
// session is a clear error instead.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/pipeline/pipeline.h"
#include "core/runtime/model_runner.h"

namespace fusebox::cli {

class SessionRecording {
public:
  // Opens (or creates) the session file and starts a new session in it, or, with `existing`,
  // adds to that session (a run of a compile the GUI recorded: no stages are written again).
  SessionRecording(const std::string& path, const std::string& model, const PipelineConfig& config,
                   std::optional<int64_t> existing = std::nullopt);
  ~SessionRecording();

  // Runs the pipeline up to `last`, recording each stage (not when adding to an existing session).
  void compile(Pipeline& p, Stage last = Stage::Codegen);
  // Compiles the configured target's generated code with its backend (cpu: clang/LLVM; cuda:
  // NVRTC to PTX), storing what the compiler made (LLVM IR and assembly, PTX) and the compile log
  // (also when compiling fails, before the error propagates).
  void compileBackend(const Pipeline& p);
  RunHooks runHooks();
  int64_t id() const;
  const std::string& path() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fusebox::cli

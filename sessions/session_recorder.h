// Records a pipeline into a session: what each finished stage produced (graphs as JSON, text and
// dot; loop programs; schedules with their fusion decisions and kernels; generated sources), and
// the runs' compiled artifacts and live profile samples.
#pragma once

#include <string>

#include "core/pipeline/pipeline.h"
#include "core/runtime/model_runner.h"
#include "sessions/session_store.h"

namespace fusebox {

// "train target=cpu partitioner=mincut fusion=on": a session's config, readable and comparable.
std::string describeConfig(const PipelineConfig& c);

// The rows a finished stage writes.
StageRecord stageRecord(const Pipeline& p, Stage s);

// Runs the pipeline's remaining stages up to `last`, writing each stage as it finishes (one
// transaction per stage, so an interrupted compile leaves every finished stage in the file).
void runAndRecord(Pipeline& p, SessionStore& store, int64_t session, Stage last = Stage::Codegen);

// Compiles each generated module with the pipeline's backend (clang/LLVM, NVRTC) and writes what
// it made (LLVM IR and assembly; PTX and SASS) and a compile log per graph; rethrows the
// compiler's Error after logging it.
void recordBackendCompile(SessionStore& store, int64_t session, const Pipeline& p);

// Hooks for runOnCpu / runOnCuda that write the compiled artifacts and every iteration's kernel
// times (run number `run`) to the session as they happen.
RunHooks recordingHooks(SessionStore& store, int64_t session, int run, const std::string& target);

}  // namespace fusebox

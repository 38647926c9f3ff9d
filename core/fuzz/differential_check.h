// One differential check: a program text through the whole pipeline under one config, compared
// with the reference interpreter. Every exception becomes an outcome; nothing escapes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/autograd/partition.h"

namespace fusebox::fuzz {

enum class FuzzTarget { Cpu, Ptx, Cuda };
const char* targetName(FuzzTarget t);

struct CheckConfig {
  FuzzTarget target = FuzzTarget::Cpu;
  bool train = false;
  Partitioner partitioner = Partitioner::MinCut;
  bool fusion = true;
  // "cpu infer fusion", "ptx train mincut nofusion": part of a failure's signature.
  std::string str() const;
};

// The inverse of CheckConfig::str(): "cpu train mincut fusion".
std::optional<CheckConfig> parseCheckConfig(const std::string& text);
// The config a reproducer file names on its "# config: ..." line (reproducerConfigLine), if any.
std::optional<CheckConfig> reproducerConfig(const std::string& fileText);
std::string reproducerConfigLine(const CheckConfig& c);

// Every config of a target: inference with fusion on and off, training under both
// partitioners with fusion on and off.
std::vector<CheckConfig> configsFor(FuzzTarget t);

enum class OutcomeKind {
  Ok,
  Mismatch,      // compiled outputs differ from the interpreter's
  Crash,         // the check's process died (signal) or ran past its time
  Exception,     // a pipeline stage threw
  CompileError,  // clang or NVRTC rejected generated code
  Invalid,       // the program does not parse or trace: a generator bug, not a compiler one
};
const char* outcomeKindName(OutcomeKind k);

struct FuzzOutcome {
  OutcomeKind kind = OutcomeKind::Ok;
  std::string message;
  std::string stage;  // the first stage whose graph differs, or where it threw ("" when unknown)
  bool failed() const { return kind != OutcomeKind::Ok; }
};

// Runs `program` (.fbx text) in this process. `seed` picks the input data.
FuzzOutcome checkProgram(const std::string& program, const CheckConfig& config, uint64_t seed = 0);

// The same in a child process, so a generated kernel that crashes or hangs is an outcome too.
FuzzOutcome checkProgramIsolated(const std::string& program, const CheckConfig& config, double timeoutSeconds, uint64_t seed = 0);

// What makes two failures "the same": kind, config and the message with numbers, names of
// generated values and source locations taken out.
std::string failureSignature(const FuzzOutcome& o, const CheckConfig& config);
std::string normalizeMessage(const std::string& message);

// Whether this process can check a target here (ptx: NVRTC found; cuda: a GPU answers).
bool targetAvailable(FuzzTarget t, std::string* why = nullptr);

}  // namespace fusebox::fuzz

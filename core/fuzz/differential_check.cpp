#include "core/fuzz/differential_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <regex>
#include <sstream>
#include <string_view>

#include "core/codegen/cpu/jit_compiler.h"
#include "core/codegen/cuda/nvrtc_compiler.h"
#include "core/frontend/fbx_parser.h"
#include "core/interp/interpreter.h"
#include "core/loopir/loop_interp.h"
#include "core/pipeline/pipeline.h"
#include "core/runtime/cuda_executable.h"
#include "core/runtime/model_runner.h"

namespace fusebox::fuzz {

const char* targetName(FuzzTarget t) { return t == FuzzTarget::Cpu ? "cpu" : t == FuzzTarget::Ptx ? "ptx" : "cuda"; }

const char* outcomeKindName(OutcomeKind k) {
  switch (k) {
    case OutcomeKind::Ok: return "ok";
    case OutcomeKind::Mismatch: return "mismatch";
    case OutcomeKind::Crash: return "crash";
    case OutcomeKind::Exception: return "exception";
    case OutcomeKind::CompileError: return "compile_error";
    case OutcomeKind::Invalid: return "invalid_program";
  }
  return "?";
}

std::string CheckConfig::str() const {
  std::string s = std::string(targetName(target)) + (train ? " train " + std::string(partitionerName(partitioner)) : " infer");
  return s + (fusion ? " fusion" : " nofusion");
}

std::optional<CheckConfig> parseCheckConfig(const std::string& text) {
  for (FuzzTarget t : {FuzzTarget::Cpu, FuzzTarget::Ptx, FuzzTarget::Cuda})
    for (const CheckConfig& c : configsFor(t))
      if (c.str() == text) return c;
  return std::nullopt;
}

namespace {
constexpr std::string_view kConfigPrefix = "# config: ";
}

std::string reproducerConfigLine(const CheckConfig& c) { return std::string(kConfigPrefix) + c.str() + "\n"; }

std::optional<CheckConfig> reproducerConfig(const std::string& fileText) {
  std::istringstream in(fileText);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(kConfigPrefix, 0) == 0) return parseCheckConfig(line.substr(kConfigPrefix.size()));
  return std::nullopt;
}

std::vector<CheckConfig> configsFor(FuzzTarget t) {
  std::vector<CheckConfig> out;
  for (bool fusion : {true, false}) out.push_back({t, false, Partitioner::MinCut, fusion});
  for (Partitioner p : {Partitioner::MinCut, Partitioner::Default})
    for (bool fusion : {true, false}) out.push_back({t, true, p, fusion});
  return out;
}

namespace {

FuzzOutcome outcome(OutcomeKind k, std::string message, std::string stage) { return {k, std::move(message), std::move(stage)}; }

// The data every check runs on: the traced graph's inputs, and for training the tangents the
// runner feeds the backward (1 for a scalar loss, seeded noise otherwise).
struct CheckData {
  std::vector<Tensor> primals, tangents;
};

CheckData checkData(const Pipeline& p, uint64_t seed) {
  CheckData d;
  d.primals = makeInputs(p.traced(), seed);
  if (p.config().train) {
    const Graph& bwd = p.partition().backward;
    for (const GraphInput& in : bwd.inputs())
      if (in.role == InputRole::Tangent) {
        const TensorType& t = bwd.type(in.value);
        InitSpec ones, noise;  // as the runner makes them
        ones.kind = InitSpec::Kind::Ones;
        noise.kind = InitSpec::Kind::Randn, noise.seed = 99, noise.a = 1.0, noise.b = 0.0;
        d.tangents.push_back(t.shape.empty() ? makeTensor(t, ones, 0) : makeTensor(t, noise, seed));
      }
  }
  return d;
}

// The first output of `got` not close to `want`, as a message; "" when all match.
std::string firstDifference(const std::vector<Tensor>& got, const std::vector<Tensor>& want, const Graph& ref) {
  if (got.size() != want.size()) return std::to_string(got.size()) + " outputs, want " + std::to_string(want.size());
  for (size_t i = 0; i < want.size(); ++i)
    if (!closeForDType(got[i], want[i])) {
      Tensor g = got[i];
      if (g.numel() == want[i].numel()) g.sizes = want[i].sizes;
      Difference d = compareTensors(g, want[i]);
      char buf[160];
      std::snprintf(buf, sizeof buf, ": max abs diff %.3g, max rel diff %.3g", d.maxAbs, d.maxRel);
      return "output " + ref.value(ref.outputs()[i]).name + buf;
    }
  return "";
}

// Runs a stage's graphs (one, or forward then backward) as the compiled code would: the
// backward takes the forward's saved tensors and the tangents.
template <class Run>
std::vector<Tensor> runStage(const Pipeline& p, const CheckData& d, Run run) {
  if (!p.config().train) return run(0, d.primals);
  size_t numFwd = p.joint().numForwardOutputs, numSaved = p.partition().report.saved.size();
  std::vector<Tensor> fwd = run(0, d.primals);
  std::vector<Tensor> bwdIn(fwd.begin() + static_cast<long>(numFwd), fwd.begin() + static_cast<long>(numFwd + numSaved));
  bwdIn.insert(bwdIn.end(), d.tangents.begin(), d.tangents.end());
  std::vector<Tensor> out(fwd.begin(), fwd.begin() + static_cast<long>(numFwd));
  std::vector<Tensor> grads = run(1, bwdIn);
  out.insert(out.end(), grads.begin(), grads.end());
  return out;
}

// Which stage's graph first computes something else than the reference (traced or joint graph),
// by the interpreter; "schedule/codegen" when every graph agrees and only compiled code differs.
std::string firstDifferingStage(const Pipeline& p, uint64_t seed) {
  try {
    CheckData d = checkData(p, seed);
    const Graph& ref = p.config().train ? p.joint().graph : p.traced();
    std::vector<Tensor> in = d.primals;
    in.insert(in.end(), d.tangents.begin(), d.tangents.end());
    std::vector<Tensor> want = interpret(ref, in);
    if (p.config().train) {
      auto part = runStage(p, d, [&](size_t g, const std::vector<Tensor>& x) {
        return interpret(g == 0 ? p.partition().forward : p.partition().backward, x);
      });
      if (!firstDifference(part, want, ref).empty()) return "partition";
    }
    auto prims = runStage(p, d, [&](size_t g, const std::vector<Tensor>& x) { return interpret(p.prims()[g], x); });
    if (!firstDifference(prims, want, ref).empty()) return "decompose";
    auto loops = runStage(p, d, [&](size_t g, const std::vector<Tensor>& x) { return interpretLoops(p.loops()[g], x); });
    if (!firstDifference(loops, want, ref).empty()) return "lower";
    return "schedule/codegen";
  } catch (const std::exception& e) {
    return std::string("unknown (the stage interpreter threw: ") + e.what() + ")";
  }
}

FuzzOutcome compareRun(const Pipeline& p, const RunReport& r, uint64_t seed) {
  int bad = 0;
  std::string first;
  for (const OutputCheck& c : r.checks)
    if (!c.ok && bad++ == 0) {
      char buf[200];
      std::snprintf(buf, sizeof buf, ": max abs diff %.3g, max rel diff %.3g (the reference's own f32 error: %.3g)", c.diff.maxAbs,
                    c.diff.maxRel, c.referenceNoise);
      first = "output " + c.name + buf;
    }
  if (r.checks.empty()) return outcome(OutcomeKind::Mismatch, "no output was checked", "");
  if (!bad) return {};
  if (bad > 1) first += " (and " + std::to_string(bad - 1) + " more)";
  return outcome(OutcomeKind::Mismatch, first, firstDifferingStage(p, seed));
}

FuzzOutcome checkTarget(const Pipeline& p, const CheckConfig& c, uint64_t seed) {
  if (c.target == FuzzTarget::Cpu) {
    for (const GeneratedModule& m : p.modules()) {
      try {
        compileCpuModule(m.source);  // cached by source: runOnCpu finds it compiled
      } catch (const std::exception& e) {
        return outcome(OutcomeKind::CompileError, e.what(), "compile");
      }
    }
    try {
      return compareRun(p, runOnCpu(p, 1, seed), seed);
    } catch (const std::exception& e) {
      return outcome(OutcomeKind::Exception, e.what(), "run");
    }
  }
  int cc = c.target == FuzzTarget::Cuda ? cudaComputeCapability() : 90;
  for (const GeneratedModule& m : p.modules()) {
    try {
      compileCudaModule(m.source, cc);
    } catch (const std::exception& e) {
      return outcome(OutcomeKind::CompileError, e.what(), "nvrtc");
    }
  }
  if (c.target == FuzzTarget::Ptx) return {};
  try {
    return compareRun(p, runOnCuda(p, 1, seed), seed);
  } catch (const std::exception& e) {
    return outcome(OutcomeKind::Exception, e.what(), "run");
  }
}

}  // namespace

FuzzOutcome checkProgram(const std::string& program, const CheckConfig& config, uint64_t seed) {
  try {
    std::optional<ModelDef> model;
    try {
      model = parseModel(program, "fuzz.fbx");
    } catch (const std::exception& e) {
      return outcome(OutcomeKind::Invalid, e.what(), "parse");
    }
    PipelineConfig pc;
    pc.train = config.train;
    pc.partitioner = config.partitioner;
    pc.schedule.fusion = config.fusion;
    pc.joint.allFloatInputs = config.train;  // gradients of the inputs too
    pc.target = config.target == FuzzTarget::Cpu ? "cpu" : "cuda";  // ptx: the CUDA backend's code, compiled only
    Pipeline p(std::move(*model), pc);
    try {
      p.runUntil(Stage::Trace);
    } catch (const std::exception& e) {
      return outcome(OutcomeKind::Invalid, e.what(), "trace");
    }
    while (std::optional<Stage> s = p.nextStage()) {
      try {
        p.step();
      } catch (const std::exception& e) {
        return outcome(OutcomeKind::Exception, e.what(), stageName(*s));
      }
    }
    return checkTarget(p, config, seed);
  } catch (const std::exception& e) {
    return outcome(OutcomeKind::Exception, e.what(), "");
  } catch (...) {
    return outcome(OutcomeKind::Exception, "an exception that is not a std::exception", "");
  }
}

std::string normalizeMessage(const std::string& message) {
  std::string first = message.substr(0, message.find('\n'));
  // A compiler's log: its first error says what went wrong, the first line only that it failed.
  size_t err = message.find("error");
  if (err != std::string::npos && err > first.size()) {
    size_t lineStart = message.rfind('\n', err) + 1;
    first += " " + message.substr(lineStart, message.find('\n', err) - lineStart);
  }
  if (first.size() > 240) first.resize(240);
  static const std::regex number(R"(\b(inf|nan)\b|[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?)");
  return std::regex_replace(first, number, "#");
}

std::string failureSignature(const FuzzOutcome& o, const CheckConfig& config) {
  std::string stage = o.stage.substr(0, o.stage.find(" ("));
  return std::string(outcomeKindName(o.kind)) + " | " + config.str() + " | " + stage + " | " + normalizeMessage(o.message);
}

}  // namespace fusebox::fuzz

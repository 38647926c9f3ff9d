// `fusebox fuzz`: differential fuzzing of the compiler. Generates random programs, runs each
// under every config of each target, compares with the reference interpreter, and minimizes
// every new kind of failure to a small reproducer.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "app/cli_args.h"
#include "app/commands.h"
#include "core/fuzz/differential_check.h"
#include "core/fuzz/minimizer.h"
#include "core/fuzz/program_generator.h"
#include "core/ir/error.h"

namespace fusebox::cli {

namespace {

using namespace fusebox::fuzz;
namespace fs = std::filesystem;

// Ctrl-C ends a campaign with its summary: the check in flight (its child got the signal too) is
// not counted, minimization stops, and the summary says the run was interrupted.
volatile std::sig_atomic_t interrupted = 0;
extern "C" void onInterrupt(int) { interrupted = 1; }

const char* kFuzzHelp =
    "usage: fusebox fuzz [--seconds N] [--seed S] [--programs N] [--targets cpu,ptx,cuda] [--out DIR]\n"
    "                    [--timeout S] [--no-minimize]\n\n"
    "Differential fuzzing: generates random well-typed .fbx programs (edge shapes: size-1 dims, odd and\n"
    "prime sizes, long rows, broadcasting, views into reductions, integer tensors, nested scopes), runs each\n"
    "under every config (inference and training with both partitioners, fusion on and off) of each target,\n"
    "and compares with the reference interpreter. Each failure is printed as it is found; each new kind of\n"
    "failure (its signature: kind, config, normalized message) is minimized by delta debugging.\n"
    "  --seconds N      stop after N seconds (default 60, or no limit when --programs is given)\n"
    "  --seed S         first program seed (default 1); the same seed and --programs give the same run\n"
    "  --programs N     stop after N programs\n"
    "  --targets LIST   cpu (LLVM JIT, checked), ptx (NVRTC compile only), cuda (run on the GPU, checked);\n"
    "                   default cpu,ptx; targets unavailable here are skipped with a note\n"
    "  --out DIR        write each minimized reproducer as DIR/<signature-hash>.fbx\n"
    "  --timeout S      a check running longer is a failure (default 120)\n"
    "  --no-minimize    report failures without minimizing them\n"
    "  --replay FILE    check one reproducer under the config its `# config:` line names, in this process\n"
    "                   (the same data and input gradients as the fuzzer; run it under a debugger)\n"
    "Ends with `N programs, M configs, K failures (U unique)` (M: program-config checks run); a long\n"
    "run prints the same counts to stderr once a minute.\n"
    "Exit status 1 when any check failed, 0 otherwise.\n";

std::string hashHex(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::vector<FuzzTarget> parseTargets(const std::string& list) {
  std::vector<FuzzTarget> out;
  std::stringstream ss(list);
  std::string t;
  while (std::getline(ss, t, ',')) {
    if (t == "cpu") out.push_back(FuzzTarget::Cpu);
    else if (t == "ptx") out.push_back(FuzzTarget::Ptx);
    else if (t == "cuda") out.push_back(FuzzTarget::Cuda);
    else throw UsageError("--targets takes cpu, ptx and cuda separated by commas, got '" + t + "'");
  }
  if (out.empty()) throw UsageError("--targets needs at least one target");
  return out;
}

std::string indent(const std::string& text) {
  std::string out = "    ";
  for (char c : text) out += c == '\n' ? std::string("\n    ") : std::string(1, c);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// The reproducer file: the config, signature and message as escaped one-line comments.
std::string reproducerText(FuzzProgram p, const CheckConfig& c, const FuzzOutcome& o, const std::string& signature,
                           uint64_t programSeed) {
  p.comment.clear();
  std::string head = "# fusebox fuzz reproducer (program seed " + std::to_string(programSeed) + ")\n";
  head += reproducerConfigLine(c);  // a config's text is fixed words: nothing to escape
  head += "# outcome: " + programComment(std::string(outcomeKindName(o.kind)) + (o.stage.empty() ? "" : " at " + o.stage)) + "\n";
  head += "# message: " + programComment(o.message) + "\n";
  head += "# signature: " + programComment(signature) + "\n";
  head += "# reproduce: fusebox fuzz --replay THIS_FILE\n";
  return head + printProgram(p);
}

// `--replay FILE`: the reproducer's program under the config of its "# config:" line, checked in
// this process with the fuzzer's data and input gradients.
int replay(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("fuzz: cannot read '" + path + "'");
  std::stringstream text;
  text << f.rdbuf();
  std::optional<CheckConfig> c = reproducerConfig(text.str());
  if (!c) throw Error(path + ": no '# config:' line naming a config such as 'cpu train mincut fusion'");
  FuzzOutcome o = checkProgram(text.str(), *c);
  std::printf("%s: %s%s%s%s\n", c->str().c_str(), outcomeKindName(o.kind), o.stage.empty() ? "" : (" at " + o.stage).c_str(),
              o.message.empty() ? "" : ": ", o.message.c_str());
  return o.failed() ? 1 : 0;
}

}  // namespace

int fuzzCommand(const std::vector<std::string>& argv) {
  if (wantsHelp(argv)) return std::cout << kFuzzHelp, 0;
  Args a(argv, {"--seconds", "--seed", "--programs", "--targets", "--out", "--timeout", "--replay"}, {"--no-minimize"});
  if (!a.positional().empty()) throw UsageError("fuzz takes no positional arguments");
  if (std::optional<std::string> file = a.value("--replay")) return replay(*file);
  int programs = a.intValue("--programs", 0, 1, 1 << 30);
  int seconds = a.intValue("--seconds", programs ? 0 : 60, 1, 1 << 30);
  uint64_t seed = static_cast<uint64_t>(a.intValue("--seed", 1, 0, 1 << 30));
  int timeout = a.intValue("--timeout", 120, 1, 100000);
  bool minimize = !a.flag("--no-minimize");
  std::optional<std::string> out = a.value("--out");
  if (out) {
    std::error_code ec;
    fs::create_directories(*out, ec);
    if (ec) throw Error("fuzz: cannot create '" + *out + "': " + ec.message());
  }

  std::vector<CheckConfig> configs;
  for (FuzzTarget t : parseTargets(a.valueOr("--targets", "cpu,ptx"))) {
    std::string why;
    if (!targetAvailable(t, &why)) {
      std::fprintf(stderr, "fuzz: target %s skipped: %s\n", targetName(t), why.c_str());
      continue;
    }
    for (const CheckConfig& c : configsFor(t)) configs.push_back(c);
  }
  if (configs.empty()) throw Error("fuzz: none of the requested targets is available here");

  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  auto timeUp = [&] { return seconds > 0 && elapsed() >= seconds; };
  int ran = 0, checks = 0, failures = 0;
  std::map<std::string, std::string> unique;  // signature -> reproducer file (or "")
  std::set<std::string> minimizedBugs;        // failures minimized already, whatever their config
  interrupted = 0;
  std::signal(SIGINT, onInterrupt);
  double lastProgress = 0;
  for (uint64_t i = 0; (!programs || ran < programs) && !timeUp() && !interrupted; ++i) {
    if (elapsed() - lastProgress >= 60) {  // a long campaign says it is alive, on stderr
      lastProgress = elapsed();
      std::fprintf(stderr, "fuzz: %.0f s, %d programs, %d configs, %d failures (%zu unique)\n", lastProgress, ran, checks, failures,
                   unique.size());
    }
    uint64_t programSeed = seed + i;
    FuzzProgram infer = generateFuzzProgram(programSeed, {});
    GeneratorOptions trainOpts;
    trainOpts.training = true;
    FuzzProgram train = generateFuzzProgram(programSeed, trainOpts);
    ++ran;
    bool invalid[2] = {false, false};  // a program that does not trace fails every config the same way
    for (const CheckConfig& c : configs) {
      if (timeUp() && !programs) break;
      if (invalid[c.train]) continue;
      const FuzzProgram& prog = c.train ? train : infer;
      FuzzOutcome o = checkProgramIsolated(printProgram(prog), c, timeout);
      if (interrupted) break;
      ++checks;
      if (!o.failed()) continue;
      ++failures;
      invalid[c.train] |= o.kind == OutcomeKind::Invalid;
      std::string sig = failureSignature(o, c);
      bool isNew = !unique.count(sig);
      std::printf("FAIL program seed %llu, %s: %s%s: %s%s\n", static_cast<unsigned long long>(programSeed), c.str().c_str(),
                  outcomeKindName(o.kind), o.stage.empty() ? "" : (" at " + o.stage).c_str(), o.message.substr(0, 600).c_str(),
                  isNew ? "" : "  (seen before)");
      std::fflush(stdout);
      if (!isNew) continue;
      unique[sig] = "";
      // The same failure under another config: its reproducer was already minimized.
      std::string bug = std::string(outcomeKindName(o.kind)) + " | " + o.stage + " | " + normalizeMessage(o.message);
      if (!minimizedBugs.insert(bug).second) {
        std::printf("  (the same failure as under an earlier config: not minimized again)\n");
        continue;
      }
      FuzzProgram small = prog;
      if (minimize) {
        MinimizeResult m = minimizeProgram(prog, [&](const FuzzProgram& cand) {
          if (interrupted) return false;
          FuzzOutcome co = checkProgramIsolated(printProgram(cand), c, timeout);
          return co.failed() && failureSignature(co, c) == sig;
        });
        small = m.program;
        std::printf("  minimized in %d checks (%d reductions), %zu -> %zu statements:\n", m.checks, m.accepted, prog.stmts.size(),
                    small.stmts.size());
      }
      std::string text = reproducerText(small, c, o, sig, programSeed);
      std::printf("%s\n", indent(text).c_str());
      if (out) {
        fs::path file = fs::path(*out) / (hashHex(sig) + ".fbx");
        std::ofstream f(file, std::ios::binary);
        if (!f || !(f << text)) std::fprintf(stderr, "fuzz: cannot write '%s'\n", file.string().c_str());
        else std::printf("  written to %s\n", file.string().c_str());
      }
      std::fflush(stdout);
    }
  }
  std::signal(SIGINT, SIG_DFL);
  if (interrupted) std::printf("interrupted: the check in flight is not counted\n");
  double secs = elapsed();
  std::printf("%.1f s, %.2f programs/s, %.2f checks/s\n", secs, secs > 0 ? ran / secs : 0.0, secs > 0 ? checks / secs : 0.0);
  std::printf("%d programs, %d configs, %d failures (%zu unique)\n", ran, checks, failures, unique.size());
  return failures ? 1 : 0;
}

}  // namespace fusebox::cli

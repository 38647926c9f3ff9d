// `fusebox compile` (the pipeline step by step, recorded in a session) and `fusebox report`
// (HTML from a session, or a fusion comparison of two).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "app/cli_args.h"
#include "app/commands.h"
#include "app/terminal_progress.h"
#include "app/session_recording.h"
#include "core/backend/backend.h"
#include "core/frontend/model_loader.h"
#include "core/ir/error.h"

#ifdef FUSEBOX_HAVE_PDF
#include "views/pdf_report.h"
#endif
#ifdef FUSEBOX_HAVE_SESSIONS
#include "report/html_report.h"
#include "sessions/session_store.h"
#endif

namespace fusebox::cli {

namespace {

const char* kCompileHelp =
    "usage: fusebox compile MODEL [--train] [--target cpu|cuda] [--until STAGE] [--session FILE]\n"
    "                      [--partitioner mincut|default] [--no-fusion] [--dim NAME=SIZE]...\n\n"
    "Runs the compile pipeline stage by stage and prints each stage's time. With --session, every stage's\n"
    "graphs, the fusion decisions, the kernels and the generated code are written to FILE (SQLite) as the\n"
    "stage finishes, so an interrupted compile keeps every finished stage.\n"
    "  --until STAGE     trace, joint, partition, decompose, lower, schedule, codegen, or compile (default):\n"
    "                    compile also runs the backend compiler (clang/LLVM for cpu, NVRTC to PTX for cuda)\n"
    "  MODEL             a built-in model (see `fusebox models`), a .fbx file or a .onnx file\n"
    "  --train           a training step: joint graph, partition, forward and backward graphs\n"
    "  --target T        cpu (default) or cuda\n"
    "  --session FILE    record every stage in FILE (default: none; the GUI uses ~/.local/share/fusebox/sessions.fbs)\n"
    "  --partitioner P   mincut (default) or default: how the training graph is split into forward and backward\n"
    "  --no-fusion       one kernel per loop-IR node (the baseline for fusion comparisons)\n"
    "  --dim B=8         size of a symbolic dimension (repeatable; defaults come from the model's dims(...))\n"
    "  --max-memory SIZE memory budget for tensors and buffers (e.g. 8G, 512M; default: half of physical RAM)\n"
    "Progress goes to stderr when it is a terminal.\n";

const char* kReportHelp =
    "usage: fusebox report SESSION_FILE [--id N] [--compare SESSION_FILE2 [--compare-id M]] -o report.html|report.pdf [--include asm]\n\n"
    "Writes a self-contained HTML report of a recorded session (the file's latest unless --id): stage\n"
    "graphs (Graphviz), fusion decisions, kernels, profile charts and generated code. With --compare, a\n"
    "comparison of the two sessions (one model) instead, matched by traced provenance: traced ops computed\n"
    "with different ops, decisions that differ, kernels paired by what they compute with their time\n"
    "change and its noise band. The two sessions may be in one file (--compare FILE --compare-id M).\n"
    "A .pdf output draws the graphs, then the tables and code (Qt build); it leaves the LLVM IR,\n"
    "assembly and PTX listings out unless --include asm.\n"
    "Session files are only read (a read-only file or folder is fine); everything taken from them is\n"
    "escaped, and graphs too large to lay out are listed instead of drawn.\n";

}  // namespace

int compileCommand(const std::vector<std::string>& argv) {
  if (wantsHelp(argv)) return std::cout << kCompileHelp, 0;
  Args a(argv, {"--target", "--until", "--session", "--partitioner", "--dim", "--max-memory"}, {"--train", "--no-fusion"});
  applyMemoryBudget(a);
  if (a.positional().size() != 1) throw UsageError("compile needs exactly one MODEL (a built-in name or a .fbx file)");
  std::string target = targetArg(a, PipelineConfig{}.target, false);
  std::string until = a.valueOr("--until", "compile");
  std::optional<Stage> last = until == "compile" ? Stage::Codegen : parseStage(until);
  if (!last) throw UsageError("unknown stage '" + until + "' for --until");
  PipelineConfig config;
  config.target = target;
  config.trace = traceOptions(a);
  config.train = a.flag("--train");
  config.partitioner = partitionerArg(a);
  config.schedule.fusion = !a.flag("--no-fusion");
  Pipeline p(loadModel(a.positional()[0]), config);
  TerminalProgress progress;
  progress.watch(p);
  std::optional<SessionRecording> session;
  if (auto path = a.value("--session")) {
    session.emplace(*path, a.positional()[0], config);
    session->compile(p, *last);
  } else {
    p.runUntil(*last);
  }
  progress.clear();
  double total = 0;
  for (const StageTiming& t : p.timings()) {
    std::printf("%-10s %8.2f ms\n", stageName(t.stage), t.ms);
    total += t.ms;
  }
  std::printf("%-10s %8.2f ms\n", "pipeline", total);
  if (until == "compile") {
    if (!p.backend().compilerAvailable()) {
      std::printf("backend compile skipped: this fusebox has no %s compiler built in\n", p.backend().compilerName());
    } else if (session) {
      progress.show("compiling the generated code (" + target + ")…");
      session->compileBackend(p);
      progress.clear();
      std::printf("backend compile (%s): ok\n", target.c_str());
    }
  }
  if (session) std::printf("recorded as session %lld in %s\n", static_cast<long long>(session->id()), session->path().c_str());
  return 0;
}

int reportCommand(const std::vector<std::string>& argv) {
  if (wantsHelp(argv)) return std::cout << kReportHelp, 0;
  Args a(argv, {"-o", "--id", "--compare", "--compare-id", "--include"}, {});
  bool includeCompiled = false;
  if (auto what = a.value("--include")) {
    if (*what != "asm") throw UsageError("report: --include takes asm (the LLVM IR, assembly and PTX listings), got '" + *what + "'");
    includeCompiled = true;
  }
  if (a.positional().size() != 1) throw UsageError("report needs exactly one SESSION_FILE");
  auto out = a.value("-o");
  if (!out) throw UsageError("report needs -o FILE.html");
#ifdef FUSEBOX_HAVE_SESSIONS
  auto pick = [](const SessionStore& s, const std::optional<std::string>& id) -> int64_t {
    if (id) {
      char* end = nullptr;
      long long v = std::strtoll(id->c_str(), &end, 10);
      if (id->empty() || *end) throw UsageError("--id expects a session number, got '" + *id + "'");
      return s.session(v).id;
    }
    std::optional<int64_t> latest = s.latestSession();
    if (!latest) throw Error(s.path() + ": the file holds no session yet");
    return *latest;
  };
  // Reports only read: the sessions are opened read-only (a read-only file can be reported, and
  // nothing is written to or created beside a file that is not ours), and the output may not be
  // one of them.
  for (const std::optional<std::string>& in : {std::optional<std::string>(a.positional()[0]), a.value("--compare")}) {
    std::error_code ec;
    if (in && std::filesystem::equivalent(*in, *out, ec))
      throw UsageError("report: -o " + *out + " is the session file itself; choose another output file");
  }
  SessionStore store = SessionStore::openReadOnly(a.positional()[0]);
  int64_t id = pick(store, a.value("--id"));
  if (out->size() > 4 && out->compare(out->size() - 4, 4, ".pdf") == 0) {
#ifdef FUSEBOX_HAVE_PDF
    if (auto other = a.value("--compare")) {
      if (*other == a.positional()[0]) {
        writePdfComparisonHeadless(store, id, store, pick(store, a.value("--compare-id")), *out);
      } else {
        SessionStore second = SessionStore::openReadOnly(*other);
        writePdfComparisonHeadless(store, id, second, pick(second, a.value("--compare-id")), *out);
      }
    } else {
      writePdfReportHeadless(store, id, *out, includeCompiled);
    }
    std::printf("wrote %s\n", out->c_str());
    return 0;
#else
    throw Error("report: PDF needs the Qt build of fusebox (install the Qt 6 packages and reconfigure); use -o FILE.html");
#endif
  }
  std::string html;
  if (auto other = a.value("--compare")) {
    if (*other == a.positional()[0]) {
      html = htmlComparisonReport(store, id, store, pick(store, a.value("--compare-id")));
    } else {
      SessionStore second = SessionStore::openReadOnly(*other);
      html = htmlComparisonReport(store, id, second, pick(second, a.value("--compare-id")));
    }
  } else {
    html = htmlReport(store, id);
  }
  std::ofstream f(*out, std::ios::binary);
  if (!f || !(f << html)) throw Error("cannot write " + *out);
  std::printf("wrote %s (%zu bytes)\n", out->c_str(), html.size());
  return 0;
#else
  throw Error("report: this fusebox was built without sessions (install libsqlite3-dev and libgraphviz-dev, then reconfigure)");
#endif
}

}  // namespace fusebox::cli

#include "app/commands.h"
#include "app/terminal_progress.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>

#include "app/cli_args.h"
#include "app/session_recording.h"
#include "core/backend/backend.h"
#include "core/codegen/compiled_listing.h"
#include "core/decompose/decompose.h"
#include "core/frontend/model_loader.h"
#include "core/frontend/onnx/onnx_test_data.h"
#include "core/interp/interpreter.h"
#include "core/ir/memory_budget.h"
#include "core/ir/printers.h"
#include "core/ops/registry.h"
#include "core/pipeline/pipeline.h"
#include "core/pipeline/stage_table.h"
#include "core/runtime/blas_kernels.h"
#include "core/runtime/model_runner.h"
#include "core/trace/trace.h"

namespace fusebox::cli {

namespace {

// What `dump --stage` prints: a stage of the pipeline's table (by the stage's name, or by one of
// its graphs' names when the table says so), or the CUDA backend's code views below it.
struct DumpView {
  std::string name;
  Stage stage;
  std::string graph;     // one graph of the stage; "" for all of them
  std::string target;    // the backend whose code it shows ("" for the default, cpu)
  std::string compiled;  // the compiled artifact it shows ("ptx"); "" for the source
};

std::vector<DumpView> dumpViews() {
  std::vector<DumpView> views;
  PipelineConfig training;
  training.train = true;
  for (const StageDescriptor& d : stageTable()) {
    if (!d.dumpByGraph) views.push_back({d.name, d.stage, "", "", ""});
    else
      for (const std::string& g : d.graphs(training)) views.push_back({g, d.stage, g, "", ""});
  }
  views.push_back({"llvm", Stage::Codegen, "", "", "llvm_ir"});  // what LLVM made of the C++
  views.push_back({"asm", Stage::Codegen, "", "", "asm"});
  views.push_back({"cuda", Stage::Codegen, "", "cuda", ""});
  views.push_back({"ptx", Stage::Codegen, "", "cuda", "ptx"});
  views.push_back({"sass", Stage::Codegen, "", "cuda", "sass"});  // ptxas + nvdisasm, where the toolkit has them
  return views;
}

// "  489 | vmaxps ..." ("      | " when a line links to none), as Compiler Explorer pairs them.
std::string withSourceLines(const CompiledListing& l) {
  std::string out;
  size_t i = 0;
  for (size_t at = 0; at < l.text.size(); ++i) {
    size_t end = l.text.find('\n', at);
    if (end == std::string::npos) end = l.text.size();
    int line = i < l.sourceLines.size() ? l.sourceLines[i] : 0;
    char prefix[24];
    if (line) std::snprintf(prefix, sizeof prefix, "%6d | ", line);
    else std::snprintf(prefix, sizeof prefix, "%6s | ", "");
    out += prefix;
    out.append(l.text, at, end - at);
    out += '\n';
    at = end + 1;
  }
  return out;
}

std::string stageList() {
  std::string s;
  for (const DumpView& v : dumpViews()) s += (s.empty() ? "" : ", ") + v.name;
  return s;
}

std::string modelArg(const Args& a, const char* command) {
  if (a.positional().size() != 1)
    throw UsageError(std::string(command) + " needs exactly one MODEL (a built-in name or a .fbx file)");
  return a.positional()[0];
}

int writeOutput(const std::string& text, const std::optional<std::string>& path) {
  if (!path) {
    std::cout << text;
    return 0;
  }
  std::ofstream out(*path, std::ios::binary);
  if (!out || !(out << text)) {
    std::cerr << "fusebox: cannot write '" << *path << "'\n";
    return 1;
  }
  return 0;
}

const char* kModelsHelp =
    "usage: fusebox models [--demo]\n\nLists the built-in models with a one-line description.\n"
    "  --demo   print only the name of the demo model\n";
const char* kDumpHelp =
    "usage: fusebox dump MODEL --stage STAGE [--train] [--partitioner default|mincut] [--format text|dot|json]\n"
    "                    [--stats] [--source-lines] [--dim NAME=SIZE]... [--symbolic] [-o FILE]\n\n"
    "Runs the pipeline up to STAGE and prints that stage's graph.\n"
    "  MODEL          a built-in model (see `fusebox models`), a .fbx file or a .onnx file\n"
    "  --stage        trace      the traced graph of torch-level ops\n"
    "                 joint      the joint forward+backward graph (implies --train)\n"
    "                 forward    the forward graph after partitioning (implies --train)\n"
    "                 backward   the backward graph after partitioning (implies --train)\n"
    "                 decompose  the prim graph (with --train: the forward and the backward prim graphs)\n"
    "                 lower      the loop IR (buffers, Pointwise / Reduction / Extern nodes)\n"
    "                 schedule   the fused kernels and every fusion decision with its reason\n"
    "                 codegen    the generated C++ (kernels and wrapper)\n"
    "                 llvm       the C++ as LLVM IR after clang -O3\n"
    "                 asm        the C++ as host assembly (LLVM's x86 code)\n"
    "                 cuda       the generated CUDA C++ (kernels; externs are host launches)\n"
    "                 ptx        the CUDA code compiled by NVRTC (for the GPU present, else compute_90)\n"
    "                 sass       the PTX as GPU machine code (ptxas, then nvdisasm or cuobjdump)\n"
    "  --source-lines with llvm, asm, ptx, sass: each line after the generated-source line it was\n"
    "                 compiled from (code inlined from a helper: the kernel line that called it)\n"
    "  --no-fusion    schedule one kernel per loop-IR node (the baseline)\n"
    "  --train        training step: loss, backward, gradients of every parameter\n"
    "  --partitioner  mincut (default): min-cut rematerialization; default: save everything the backward uses\n"
    "  --format       text (default), dot (Graphviz; pipe into `dot -Tsvg`), json\n"
    "  --stats        instead of the graph: op counts before/after decomposition and the partition report\n"
    "  --dim B=8      size of a symbolic dimension (repeatable; defaults come from the model's dims(...))\n"
    "  --symbolic     keep dimensions symbolic unless given with --dim\n"
    "  -o FILE        write to FILE instead of stdout\n"
    "  --max-memory SIZE  memory budget (e.g. 8G; default: half of physical RAM)\n";
const char* kRunHelp =
    "usage: fusebox run MODEL --target interp|cpu|cuda [--train] [--iters N] [--seed S] [--threads T] [--no-fusion]\n"
    "                  [--dim NAME=SIZE]... [--data DIR]\n\n"
    "Runs MODEL (a built-in model, a .fbx file or a .onnx file) on seeded random inputs.\n"
    "  --target interp   the reference interpreter, checked against its own float64 mode\n"
    "  --target cpu      the whole pipeline, C++ compiled in process by clang/LLVM; prints a per-kernel profile\n"
    "                    (time, bytes moved, GB/s) and checks outputs (and gradients) against the interpreter\n"
    "  --target cuda     the same on the GPU: CUDA C++ compiled by NVRTC, run through the driver API and cuBLAS\n"
    "  --train           a training step: forward and backward graphs, gradients of every parameter\n"
    "  --iters N         iterations to time (default 1)\n"
    "  --seed S          seed of the random inputs (default 0)\n"
    "  --threads T       worker threads for the cpu target (default: one per hardware thread)\n"
    "  --no-fusion       one kernel per loop-IR node (to compare fusion decisions)\n"
    "  --partitioner P   mincut (default) or default: how the training graph is split into forward and backward\n"
    "  --no-check        skip the comparison with the interpreter (large benchmark shapes)\n"
    "  --data DIR        cpu/cuda, a .onnx MODEL: the inputs from DIR/input_K.pb (the K-th model input) and, in\n"
    "                    place of the interpreter, a check of the outputs against DIR/output_K.pb (as an\n"
    "                    exporter's test_data_set_0 holds PyTorch's); in training, the forward outputs only\n"
    "  --no-cuda-graphs  cuda: launch every kernel of every timed iteration (default: the timed iterations\n"
    "                    replay a CUDA graph captured from one iteration; the per-kernel profile then comes\n"
    "                    from 3 eager iterations before them)\n"
    "  --session FILE    record the stages, the compiled code and every iteration's kernel times in a session file\n"
    "  --session-id N    add this run to session N of FILE (its stages are already recorded) instead of a new session\n"
    "  --max-memory SIZE memory budget for tensors and buffers (e.g. 8G, 512M; default: half of physical RAM);\n"
    "                    a model that needs more is refused naming the value, its node and the sizes\n"
    "Progress (stages, compile, iterations) goes to stderr when it is a terminal.\n";


}  // namespace

void applyMemoryBudget(const Args& a) {
  if (std::optional<int64_t> bytes = a.byteSize("--max-memory")) setMemoryBudget(*bytes);
}

TraceOptions traceOptions(const Args& a) {
  TraceOptions o;
  o.symbolic = a.flag("--symbolic");
  for (const std::string& spec : a.values("--dim")) {
    auto eq = spec.find('=');
    std::string name = spec.substr(0, eq);
    std::string size = eq == std::string::npos ? "" : spec.substr(eq + 1);
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(size.c_str(), &end, 10);
    if (name.empty() || size.empty() || *end != '\0' || v < 0)
      throw UsageError("--dim expects NAME=SIZE with a size of 0 or more, got '" + spec + "'");
    if (errno == ERANGE) throw UsageError("--dim " + name + ": size " + size + " does not fit in int64");
    o.dims[name] = v;
  }
  return o;
}

bool wantsHelp(const std::vector<std::string>& args) {
  for (const std::string& a : args)
    if (a == "--help" || a == "-h") return true;
  return false;
}

Partitioner partitionerArg(const Args& a) {
  std::string p = a.valueOr("--partitioner", "mincut");
  if (p != "mincut" && p != "default") throw UsageError("--partitioner must be default or mincut, got '" + p + "'");
  return p == "default" ? Partitioner::Default : Partitioner::MinCut;
}

std::string targetArg(const Args& a, const std::string& fallback, bool interpToo) {
  std::string t = a.valueOr("--target", fallback);
  if (interpToo && t == "interp") return t;
  for (const Backend* b : backends())
    if (t == b->name()) return t;
  throw UsageError("--target must be " + std::string(interpToo ? "interp, " : "") + backendNames() + ", got '" + t + "'");
}

const char* const kGuiHelp =
    "usage: fusebox gui [MODEL] [--session FILE [--id N]]   (or fusebox with no arguments: the demo model)\n"
    "       fusebox gui FILE.fbs                             (its session browser, and its latest session)\n"
    "       fusebox gui MODEL --run-all [--screenshot OUT.png [--focus PANE] [--expand SCOPE[,SCOPE]] [--size WxH]]\n\n"
    "Opens the inspector: the traced, joint, prims and fused loop-IR graphs side by side with the\n"
    "generated C++/CUDA, a live per-kernel profile (Run & profile) and fusion comparisons of two runs.\n"
    "A banner explains each pane on first start. MODEL is a built-in model, a .fbx or a .onnx file.\n"
    "Needs a display (DISPLAY or WAYLAND_DISPLAY; xvfb-run or QT_QPA_PLATFORM=offscreen for headless use).\n"
    "Sessions are recorded in ~/.local/share/fusebox/sessions.fbs, or in --session FILE.\n"
    "  --session FILE   the session file to record into and read from\n"
    "  --id N           show stored session N of that file as it was recorded, without recomputing\n"
    "  --run-all        run every stage at start\n"
    "  --screenshot OUT.png  draw everything (no display needed), write the window to OUT.png and exit\n"
    "  --focus PANE     in the screenshot, one pane across the window: traced, joint, prims or fused\n"
    "  --expand SCOPE   in the screenshot, open these module scopes (layer2.0.conv1; comma-separated)\n"
    "  --size WxH       the screenshot's window size (default 1600x1000)\n"
    "Every pane opens with module scopes folded into boxes: double-click one to open it; search a\n"
    "pane by op, node name, scope, buffer or kernel (Enter: next match).\n"
    "File > Open session file... lists the sessions of any .fbs file (name, model, config, kernels,\n"
    "time per step, tags, notes) to open, rename, annotate or delete.\n";

std::string usage() {
  return "usage: fusebox COMMAND [ARGS]\n\n"
         "Commands:\n"
         "  models                              list the built-in models\n"
         "  ops [--prims]                       list the torch-level ops or the prim set\n"
         "  dump MODEL --stage STAGE [--format text|dot|json]\n"
         "                                      print a stage's graph (stages: " + stageList() + ")\n"
         "  compile MODEL [--train] [--target cpu|cuda] [--until STAGE] [--session FILE]\n"
         "                                      run the pipeline (and the backend compiler), recording every stage in a session\n"
         "  run MODEL --target interp|cpu|cuda [--train] [--iters N] [--session FILE]\n"
         "                                      run a model (interpreter, compiled CPU or GPU code) and check its numerics\n"
         "  report SESSION [--compare SESSION2] -o report.html\n"
         "                                      a self-contained HTML report of a session, or a fusion comparison of two\n"
         "  conformance DIR [--failures FILE] [--train]\n"
         "                                      ONNX backend test cases through the whole pipeline (CPU)\n"
         "  fuzz [--seconds N] [--seed S] [--programs N] [--targets cpu,ptx,cuda] [--out DIR]\n"
         "                                      differential fuzzing: random programs, compiled vs the interpreter\n"
         "  gui [MODEL] [--session FILE [--id N]]  the inspector GUI (also: fusebox with no arguments)\n\n"
         "MODEL is a built-in model name (see `fusebox models`), a .fbx file or a .onnx file.\n"
         "Options: --help (also after a command), --version\n";
}

int opsCommand(const std::vector<std::string>& argv) {
  if (wantsHelp(argv))
    return std::cout << "usage: fusebox ops [--prims]\n\nLists the torch-level ops (or, with --prims, the prim set) "
                        "with their kind and semantics.\n",
           0;
  Args a(argv, {}, {"--prims"});
  if (!a.positional().empty()) throw UsageError("ops takes no arguments");
  bool prims = a.flag("--prims");
  auto list = prims ? OpRegistry::instance().prims() : OpRegistry::instance().torchOps();
  for (const OpSchema* s : list) std::printf("%-30s %-12s %s\n", s->name.c_str(), opKindName(s->kind), s->summary.c_str());
  std::printf("%zu %s\n", list.size(), prims ? "prims" : "torch-level ops");
  return 0;
}

int modelsCommand(const std::vector<std::string>& argv) {
  if (wantsHelp(argv)) return std::cout << kModelsHelp, 0;
  Args a(argv, {}, {"--demo"});
  if (!a.positional().empty()) throw UsageError("models takes no arguments");
  if (a.flag("--demo")) return std::printf("%s\n", demoModelName()), 0;
  for (const BuiltinModel& m : builtinModels()) {
    ModelDef def = loadModel(std::string(m.name));
    std::printf("%-14s %s\n", std::string(m.name).c_str(), def.description.c_str());
  }
  return 0;
}

namespace {

std::string formatGraph(const Graph& g, const std::string& format) {
  if (format == "json") return printJson(g);
  if (format == "dot") return printDot(g, DotOptions{opKindColor, true});
  return printText(g);
}

std::string formatGraphs(const std::vector<const Graph*>& graphs, const std::string& format) {
  if (graphs.size() == 1) return formatGraph(*graphs[0], format) + (format == "json" ? "\n" : "");
  std::string out = format == "json" ? "[" : "";
  for (size_t i = 0; i < graphs.size(); ++i) {
    if (format == "json") out += (i ? "," : "") + printJson(*graphs[i]);
    else out += (i && format == "text" ? "\n" : "") + formatGraph(*graphs[i], format);
  }
  return format == "json" ? out + "]\n" : out;
}


std::string opCountTable(const std::vector<std::pair<std::string, const Graph*>>& columns) {
  std::map<std::string, std::vector<int>> rows;
  for (size_t c = 0; c < columns.size(); ++c)
    for (const auto& [op, n] : countOps(*columns[c].second)) {
      auto& row = rows[op];
      row.resize(columns.size(), 0);
      row[c] = n;
    }
  char buf[128];
  std::string out;
  std::snprintf(buf, sizeof buf, "%-30s", "op");
  out += buf;
  for (const auto& [name, g] : columns) std::snprintf(buf, sizeof buf, " %12s", name.c_str()), out += buf;
  out += "\n";
  for (auto& [op, counts] : rows) {
    counts.resize(columns.size(), 0);
    std::snprintf(buf, sizeof buf, "%-30s", op.c_str());
    out += buf;
    for (int n : counts) std::snprintf(buf, sizeof buf, " %12d", n), out += buf;
    out += "\n";
  }
  std::snprintf(buf, sizeof buf, "%-30s", "total nodes");
  out += buf;
  for (const auto& [name, g] : columns) std::snprintf(buf, sizeof buf, " %12zu", g->nodes().size()), out += buf;
  return out + "\n";
}

}  // namespace

int dumpCommand(const std::vector<std::string>& argv) {
  if (wantsHelp(argv)) return std::cout << kDumpHelp, 0;
  Args a(argv, {"--stage", "--format", "--dim", "-o", "--partitioner", "--max-memory"}, {"--symbolic", "--train", "--stats", "--no-fusion", "--source-lines"});
  applyMemoryBudget(a);
  std::string model = modelArg(a, "dump");
  std::string stage = a.valueOr("--stage", "trace");
  std::string format = a.valueOr("--format", "text");
  if (format != "text" && format != "dot" && format != "json")
    throw UsageError("--format must be text, dot or json, got '" + format + "'");
  std::vector<DumpView> views = dumpViews();
  auto view = std::find_if(views.begin(), views.end(), [&](const DumpView& v) { return v.name == stage; });
  if (view == views.end()) throw UsageError("unknown stage '" + stage + "' (available: " + stageList() + ")");
  const StageDescriptor& desc = stageDescriptor(view->stage);
  PipelineConfig config;
  if (!view->target.empty()) config.target = view->target;
  config.trace = traceOptions(a);
  config.train = a.flag("--train") || desc.trainingOnly;
  config.partitioner = partitionerArg(a);
  config.schedule.fusion = !a.flag("--no-fusion");

  Pipeline p(loadModel(model), config);
  p.runUntil(view->stage);
  std::string text;
  if (a.flag("--stats")) {
    if (stage != "decompose") p.runUntil(Stage::Decompose);
    if (config.train) {
      text = opCountTable({{"traced", &p.traced()}, {"joint", &p.joint().graph}, {"forward", &p.partition().forward},
                           {"backward", &p.partition().backward}, {"fwd prims", &p.prims()[0]}, {"bwd prims", &p.prims()[1]}});
      text += p.partition().report.str();
    } else {
      text = opCountTable({{"traced", &p.traced()}, {"prims", &p.prims()[0]}});
    }
    text += "stage times:";
    for (const StageTiming& t : p.timings()) {
      char buf[64];
      std::snprintf(buf, sizeof buf, " %s %.2f ms", stageName(t.stage), t.ms);
      text += buf;
    }
    text += "\n";
  } else {
    switch (desc.output) {
      case StageOutput::Graphs: {
        std::vector<const Graph*> gs;
        for (const NamedGraph& g : p.stageGraphs(view->stage))
          if (view->graph.empty() || g.name == view->graph) gs.push_back(g.graph);
        text = formatGraphs(gs, format);
        if (view->stage == Stage::Partition && format == "text") text += "# " + p.partition().report.str();
        break;
      }
      case StageOutput::LoopPrograms:
        for (const LoopProgram& lp : p.loops()) text += lp.str();
        break;
      case StageOutput::Schedules:
        for (size_t i = 0; i < p.schedules().size(); ++i) text += p.loops()[i].name + ":\n" + p.schedules()[i].str();
        break;
      case StageOutput::Code:
        for (const GeneratedModule& m : p.modules()) {
          if (view->compiled.empty()) {
            text += m.source;
            continue;
          }
          for (const CompiledArtifact& c : p.backend().compile(m).artifacts)
            if (c.kind == view->compiled) {
              const ListingKindInfo* kind = listingKindNamed(c.kind);  // the lines that only carry debug info out
              if (!kind) text += c.text;
              else if (!a.flag("--source-lines")) text += readListing(kind->kind, c.text, ownLinesFrom(m)).text;
              else text += withSourceLines(readListing(kind->kind, c.text, ownLinesFrom(m)));
            }
        }
        break;
    }
  }
  return writeOutput(text, a.value("-o"));
}

namespace {

int runCompiled(const std::string& model, const Args& a, const std::string& target, int iters, int seed, int threads) {
  PipelineConfig config;
  config.target = target;
  config.trace = traceOptions(a);
  config.train = a.flag("--train");
  config.schedule.fusion = !a.flag("--no-fusion");
  config.partitioner = partitionerArg(a);
  Pipeline p(loadModel(model), config);
  TerminalProgress progress;
  progress.watch(p);
  std::optional<SessionRecording> session;
  RunHooks hooks;
  if (auto path = a.value("--session")) {
    std::optional<int64_t> existing;
    if (auto id = a.value("--session-id")) existing = a.intValue("--session-id", 0, 1, 1 << 30);
    session.emplace(*path, model, config, existing);  // records every stage as it finishes
    session->compile(p);
    hooks = session->runHooks();
  } else {
    p.runAll();
  }
  bool check = !a.flag("--no-check");
  hooks = progress.wrap(hooks, iters);
  RunOptions options{iters, static_cast<uint64_t>(seed), static_cast<unsigned>(threads), check};
  options.cudaGraphs = !a.flag("--no-cuda-graphs");
  std::optional<RunData> data;
  if (auto dir = a.value("--data")) {
    OnnxDataSet set = onnxDataSetFor(p.traced(), *dir);
    data = RunData{std::move(set.inputs), std::move(set.outputs), *dir};
    if (data->expected.empty()) throw Error(*dir + ": no output_0.pb to check against");
    options.data = &*data;
  }
  RunReport r = findBackend(target).run(p, options, hooks);
  progress.clear();
  if (session) std::printf("recorded as session %lld in %s\n", static_cast<long long>(session->id()), session->path().c_str());
  double pipelineMs = 0;
  for (const StageTiming& t : p.timings()) pipelineMs += t.ms;
  std::printf("model %s (%s) on %s: pipeline %.2f ms, compile %.1f ms%s, %d iteration%s\n", p.traced().name.c_str(),
              config.train ? "training step" : "inference", target.c_str(), pipelineMs, r.compileMs, r.fromCache ? " (cached)" : "", iters,
              iters == 1 ? "" : "s");
  if (std::string blas = blasKernels(); target == "cpu" && !blas.empty()) std::printf("BLAS: OpenBLAS with its %s kernels\n", blas.c_str());
  if (config.train) {  // what the step differentiates: an imported model's constants are not trained
    std::string names;
    int trained = 0, constants = 0;
    int64_t values = 0;
    for (const GraphInput& in : p.traced().inputs()) {
      const Value& v = p.traced().value(in.value);
      if (in.role != InputRole::Param || !isFloating(v.type.dtype)) continue;
      if (!in.trainable) {
        ++constants;
        continue;
      }
      if (++trained <= 8) names += (names.empty() ? "" : ", ") + v.name;
      values += isConcrete(v.type.shape) ? numelOf(concreteSizes(v.type.shape)) : 0;
    }
    std::printf("trains %d parameter%s (%lld values): %s%s", trained, trained == 1 ? "" : "s", static_cast<long long>(values), names.c_str(),
                trained > 8 ? ", ..." : "");
    if (constants) std::printf("; %d floating constant%s of the model not trained", constants, constants == 1 ? "" : "s");
    std::printf("\n");
  }
  std::printf("stage times:");
  for (const StageTiming& t : p.timings()) std::printf(" %s %.2f ms", stageName(t.stage), t.ms);
  std::printf("\n");
  std::printf("%-10s %-28s %10s %8s %12s %9s\n", "graph", "kernel", "ms/iter", "calls", "bytes", "GB/s");
  double total = 0;
  for (const KernelRow& k : r.kernels) {
    std::printf("%-10s %-28s %10.4f %8.1f %12lld %9.2f\n", k.graph.c_str(), k.kernel.c_str(), k.msPerIter, k.callsPerIter,
                static_cast<long long>(k.bytes), k.gbPerSec);
    total += k.msPerIter;
  }
  std::printf("kernels total %.4f ms/iter; step %.4f ms/iter; %zu kernels; peak intermediate memory %lld bytes\n", total,
              r.msPerIter, r.kernels.size(), static_cast<long long>(r.peakIntermediateBytes));
  for (const std::string& note : r.notes) std::printf("%s\n", note.c_str());
  if (r.deviceMsPerIter > 0) std::printf("device %.4f ms/iter (events around each graph's iteration)\n", r.deviceMsPerIter);
  if (r.graphKernels >= 0)
    std::printf("CUDA graphs: %d kernels per iteration replayed by %zu graph launch%s instead of %d host launches\n", r.graphKernels,
                p.modules(target).size(), p.modules(target).size() == 1 ? "" : "es", r.eagerLaunches);
  for (const OutputCheck& c : r.checks) {
    std::printf("check %-24s vs %s: max abs diff %.3g, max rel diff %.3g  %s", c.name.c_str(), c.against.c_str(), c.diff.maxAbs,
                c.diff.maxRel, c.ok ? "ok" : "MISMATCH");
    if (c.referenceNoise > 0)  // the tolerance alone failed: say what decided
      std::printf(" (the interpreter's own f32 rounding error here: %.3g)", c.referenceNoise);
    std::printf("\n");
  }
  return r.ok() ? 0 : 1;
}

}  // namespace

int runCommand(const std::vector<std::string>& argv) {
  if (wantsHelp(argv)) return std::cout << kRunHelp, 0;
  Args a(argv, {"--target", "--iters", "--seed", "--dim", "--threads", "--session", "--session-id", "--partitioner", "--max-memory", "--data"},
         {"--train", "--no-fusion", "--no-check", "--no-cuda-graphs"});
  applyMemoryBudget(a);
  std::string model = modelArg(a, "run");
  std::string target = targetArg(a, "interp", true);
  int iters = a.intValue("--iters", 1, 1, 1000000);
  int seed = a.intValue("--seed", 0, 0, 1 << 30);
  int threads = a.intValue("--threads", 0, 0, 1024);
  if (target != "interp") return runCompiled(model, a, target, iters, seed, threads);

  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  Graph g = trace(loadModel(model), traceOptions(a));
  double traceMs = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  std::vector<Tensor> inputs = makeInputs(g, static_cast<uint64_t>(seed));

  std::vector<Tensor> outs;
  auto t1 = Clock::now();
  for (int i = 0; i < iters; ++i) outs = interpret(g, inputs, Precision::Native);
  double runMs = std::chrono::duration<double, std::milli>(Clock::now() - t1).count() / iters;
  std::vector<Tensor> ref = interpret(g, inputs, Precision::Float64);

  std::printf("model %s: %zu nodes, %zu inputs, traced in %.2f ms\n", g.name.c_str(), g.nodes().size(),
              g.inputs().size(), traceMs);
  std::printf("target interp: %.3f ms per iteration (%d iteration%s)\n", runMs, iters, iters == 1 ? "" : "s");
  // The tolerance of the least precise float type the graph computes in: an f32 output computed
  // from bf16 values carries bf16's error.
  double graphTol = 1e-12;
  for (const Value& v : g.values())
    graphTol = std::max(graphTol, v.type.dtype == DType::F32 ? 1e-3 : v.type.dtype == DType::F16 || v.type.dtype == DType::BF16 ? 5e-2 : 0.0);
  bool ok = true;
  for (size_t i = 0; i < outs.size(); ++i) {
    Difference d = compareTensors(outs[i], ref[i]);
    double tol = std::max(graphTol, outs[i].dtype == DType::F64 ? 1e-12 : outs[i].dtype == DType::F32 ? 1e-3 : 5e-2);
    double scale = 1;  // errors grow with the values' magnitude
    for (double v : ref[i].data)
      if (std::isfinite(v)) scale = std::max(scale, std::fabs(v));
    bool pass = d.sameShape && (d.maxAbs <= tol * scale || d.maxRel <= tol);
    ok &= pass;
    std::printf("output %zu (%s): %s\n  vs float64 reference: max abs diff %.3g, max rel diff %.3g  %s\n", i,
                g.value(g.outputs()[i]).name.c_str(), outs[i].str().c_str(), d.maxAbs, d.maxRel,
                pass ? "ok" : "MISMATCH");
  }
  return ok ? 0 : 1;
}

}  // namespace fusebox::cli

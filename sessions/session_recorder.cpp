#include "sessions/session_recorder.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "core/autograd/partition_comparison.h"
#include "core/backend/backend.h"
#include "core/ir/printers.h"
#include "core/ops/extern_prims.h"
#include "core/ops/registry.h"
#include "core/pipeline/stage_table.h"
#include "core/schedule/schedule_dot.h"

namespace fusebox {

namespace {

double stageMs(const Pipeline& p, Stage s) {
  for (const StageTiming& t : p.timings())
    if (t.stage == s) return t.ms;
  return 0;
}

// A graph's artifacts, and each node under its dot name ("n12", as printDot names it) with its
// traced origins: its provenance, and itself in the traced graph.
void addGraph(StageRecord& r, const std::string& stage, const std::string& name, const Graph& g, bool traced, double ms) {
  r.artifacts.push_back({stage, name, "json", printJson(g), ms});
  r.artifacts.push_back({stage, name, "text", printText(g), ms});
  r.artifacts.push_back({stage, name, "dot", printDot(g, DotOptions{opKindColor, true}), ms});
  for (const Node& n : g.nodes()) {
    std::set<int64_t> origins(n.provenance.begin(), n.provenance.end());
    if (traced || origins.empty()) origins.insert(n.id);
    r.nodes.push_back({stage, name, "n" + std::to_string(n.id), {origins.begin(), origins.end()}, n.scope});
  }
}

// A schedule's rows: its text and dot (a cluster per kernel, loop nodes named "l3" as
// printScheduleDot names them), decisions, kernels with their ops, and summary.
void addSchedule(StageRecord& r, const std::string& stage, const std::string& g, const LoopProgram& lp, const Schedule& sc, double ms) {
  r.artifacts.push_back({stage, g, "text", sc.str(), ms});
  r.artifacts.push_back({stage, g, "dot", printScheduleDot(lp, sc), ms});
  for (const LoopNode& n : lp.nodes)
    r.nodes.push_back({stage, g, "l" + std::to_string(n.id), {n.provenance.begin(), n.provenance.end()}, n.scope});
  for (const FusionDecision& fd : sc.decisions) r.decisions.push_back({g, fd.first, fd.second, fd.kind, fd.fused, fd.reason, fd.score});
  for (const Kernel& k : sc.kernels) {
    StoredKernel sk{g, k.id, k.name, {}, {}, k.bytesRead + k.bytesWritten, {}};
    for (const KernelItem& it : k.items) {
      const LoopNode& n = lp.nodes[it.node];
      sk.nodes.push_back(it.node);
      for (NodeId t : n.provenance) sk.provenance.push_back(t);
      for (const PrimUse& op : n.prims) sk.ops.push_back({it.node, op.op, op.recomputed});
      if (n.prims.empty() && n.kind == LoopNode::Kind::Extern) sk.ops.push_back({it.node, externPrim(n.externOp).qualifiedName()});
    }
    std::sort(sk.provenance.begin(), sk.provenance.end());  // nodes of one kernel share origins: list each once
    sk.provenance.erase(std::unique(sk.provenance.begin(), sk.provenance.end()), sk.provenance.end());
    r.kernels.push_back(std::move(sk));
  }
  r.schedules.push_back({g, lp.name, sc.memory.peakIntermediateBytes, sc.memory.liveBytes, sc.memory.allocatedBytes});
}


}  // namespace

std::string describeConfig(const PipelineConfig& c) {
  std::string s = c.train ? "train" : "infer";
  s += " target=" + c.target;
  if (c.train) s += std::string(" partitioner=") + partitionerName(c.partitioner);
  s += std::string(" fusion=") + (c.schedule.fusion ? "on" : "off");
  for (const auto& [dim, size] : c.trace.dims) s += " " + dim + "=" + std::to_string(size);
  return s;
}

StageRecord stageRecord(const Pipeline& p, Stage s) {
  StageRecord r;
  const StageDescriptor& d = stageDescriptor(s);
  const std::string stage = d.name;
  const double ms = stageMs(p, s);
  switch (d.output) {
    case StageOutput::Graphs:
      for (const NamedGraph& g : p.stageGraphs(s)) addGraph(r, stage, g.name, *g.graph, s == Stage::Trace, ms);
      if (s == Stage::Partition) {
        r.artifacts.push_back({stage, "report", "text", p.partition().report.str(), ms});
        // Both partitioners side by side, whichever this config uses.
        std::vector<PartitionerSide> sides = comparePartitioners(p.joint());
        r.artifacts.push_back({stage, "partitioners", "text", partitionerVerdict(sides[0].report, sides[1].report), ms});
        for (const PartitionerSide& side : sides)
          r.artifacts.push_back({stage, std::string("partitioner ") + partitionerName(side.report.partitioner), "text", side.text, ms});
      }
      break;
    case StageOutput::LoopPrograms:
      for (size_t i = 0; i < p.loops().size(); ++i) r.artifacts.push_back({stage, p.graphName(i), "text", p.loops()[i].str(), ms});
      break;
    case StageOutput::Schedules:
      for (size_t i = 0; i < p.schedules().size(); ++i) addSchedule(r, stage, p.graphName(i), p.loops()[i], p.schedules()[i], ms);
      break;
    case StageOutput::Code:
      for (size_t i = 0; i < p.modules().size(); ++i) {
        std::string g = p.graphName(i);
        for (const Backend* b : backends()) {  // every target's code, as the code views show it
          const GeneratedModule& m = p.modules(b->name())[i];
          r.sources.push_back({g, b->language(), m.source});
          for (const KernelLines& k : m.kernels)
            r.spans.push_back({g, b->language(), k.kernel, k.name, k.firstLine, k.lastLine, {k.provenance.begin(), k.provenance.end()}});
        }
        r.artifacts.push_back({stage, g, "text", std::to_string(p.modules()[i].source.size()) + " bytes of " + p.backend().title(), ms});
      }
      break;
  }
  return r;
}

void runAndRecord(Pipeline& p, SessionStore& store, int64_t session, Stage last) {
  while (!p.done(last)) {
    std::optional<Stage> next = p.nextStage();
    if (!next || !p.step()) break;
    store.writeStage(session, stageRecord(p, *next));
  }
}

RunHooks recordingHooks(SessionStore& store, int64_t session, int run, const std::string& target) {
  RunHooks h;
  h.compiled = [&store, session](const std::string& graph, const std::string& kind, const std::string& text) {
    store.writeSources(session, {{graph, kind, text}});
  };
  h.iteration = [&store, session, run](int iteration, const std::vector<KernelRow>& rows) {
    std::vector<ProfileSample> samples;
    for (const KernelRow& k : rows) samples.push_back({run, k.graph, k.kernel, iteration, k.msPerIter, k.bytes, k.startMs, k.launchMs});
    store.appendProfile(session, samples);
  };
  return h;
}

void recordBackendCompile(SessionStore& store, int64_t session, const Pipeline& p) {
  const Backend& backend = p.backend();
  for (size_t i = 0; i < p.modules().size(); ++i) {
    std::string graph = p.graphName(i);
    auto t0 = std::chrono::steady_clock::now();
    auto ms = [&] { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); };
    try {
      CompiledModule m = backend.compile(p.modules()[i]);
      std::vector<StoredSource> sources;
      for (const CompiledArtifact& a : m.artifacts) sources.push_back({graph, a.kind, a.text});
      store.writeSources(session, sources);
      store.writeCompileLog(session, {graph, backend.name(), true, m.log, ms()});
    } catch (const Error& e) {
      store.writeCompileLog(session, {graph, backend.name(), false, e.what(), ms()});
      throw;
    }
  }
}

}  // namespace fusebox

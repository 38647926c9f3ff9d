#include "report/stage_view.h"

#include "core/backend/backend.h"
#include "core/codegen/compiled_listing.h"
#include "core/pipeline/stage_table.h"

namespace fusebox {

namespace {

// The stage's graphs (its dot artifacts, in the order written) with their nodes' origins.
std::vector<GraphViewData> graphsOf(const StageRecord& r, bool kernelClusters) {
  std::vector<GraphViewData> out;
  for (const StageArtifact& a : r.artifacts)
    if (a.format == "dot") out.push_back({a.graph, a.body, {}, {}, kernelClusters});
  for (const StoredNode& n : r.nodes)
    for (GraphViewData& g : out)
      if (g.name == n.graph) {
        g.origins[n.node] = n.origins;
        g.scopes[n.node] = n.scope;
      }
  return out;
}

// "C++" for a source of kind "cpp": the title of the backend whose language it is.
std::string codeTitle(const std::string& kind) {
  for (const Backend* b : backends())
    if (kind == b->language()) return b->title();
  return kind;
}

}  // namespace

StageView stageView(Stage s, const StageRecord& r) {
  const StageDescriptor& d = stageDescriptor(s);
  StageView v;
  v.stage = d.name;
  v.pane = d.pane;
  if (!r.artifacts.empty()) v.ms = r.artifacts.front().ms;  // every artifact of a stage has its time
  switch (d.output) {
    case StageOutput::Graphs:
      v.graphs = graphsOf(r, false);
      for (const StageArtifact& a : r.artifacts) {  // a partition's side-by-side (files from before it have none)
        if (a.format != "text") continue;
        if (a.graph == "partitioners") v.partitionVerdict = a.body;
        if (a.graph.rfind("partitioner ", 0) == 0) v.partitioners.emplace_back(a.graph.substr(12), a.body);
      }
      break;
    case StageOutput::LoopPrograms:
      for (const StageArtifact& a : r.artifacts) v.text += a.body;
      break;
    case StageOutput::Schedules:
      v.graphs = graphsOf(r, true);
      for (const StageArtifact& a : r.artifacts) {
        if (a.format != "text") continue;
        std::string program = a.graph;  // a file from before schedule summaries names the graph only
        for (const StoredSchedule& sc : r.schedules)
          if (sc.graph == a.graph) program = sc.program;
        v.text += program + ":\n" + a.body;
      }
      for (const StoredSchedule& sc : r.schedules) v.peakBytes += sc.peakBytes;
      v.decisions = r.decisions;
      v.kernels = r.kernels;
      v.memory = r.schedules;
      break;
    case StageOutput::Code:
      for (const StoredSource& src : r.sources) {
        CodeViewData c{codeTitle(src.kind) + " " + src.graph, src.kind, src.body, {}};
        for (const StoredKernelSpan& k : r.spans)
          if (k.graph == src.graph && k.kind == src.kind) c.kernels.push_back(k);
        v.code.push_back(std::move(c));
      }
      break;
  }
  return v;
}

int ownLinesFrom(const std::vector<StoredKernelSpan>& spans, const std::string& graph, const std::string& source) {
  std::vector<int> firsts;
  for (const StoredKernelSpan& k : spans)
    if (k.graph == graph && k.kind == source) firsts.push_back(k.firstLine);
  return ownLinesFrom(firsts);
}

std::vector<CodeViewData> listingViews(const std::vector<StoredSource>& sources, const std::vector<StoredKernelSpan>& spans) {
  std::vector<CodeViewData> out;
  for (const StoredSource& src : sources) {
    const ListingKindInfo* kind = listingKindNamed(src.kind);
    if (!kind) continue;
    CompiledListing l = readListing(kind->kind, src.body, ownLinesFrom(spans, src.graph, kind->sourceLanguage));
    out.push_back({std::string(kind->title) + " " + src.graph, src.kind, std::move(l.text), {},
                   codeTitle(kind->sourceLanguage) + " " + src.graph, std::move(l.sourceLines)});
  }
  return out;
}

}  // namespace fusebox

#include "report/html_report.h"

#include "core/backend/backend.h"
#include "core/codegen/compiled_listing.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "report/graph_layout.h"
#include "report/html_escape.h"
#include "report/markup_check.h"
#include "report/stage_view.h"
#include "report/session_compare.h"
#include "report/session_summary.h"

namespace fusebox {

namespace {

// The one escaping function (report/html_escape.h), for every value read from a session.
std::string esc(const std::string& s) { return htmlEscape(s); }

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

const char* kStyle = R"CSS(
body { font-family: Helvetica, Arial, sans-serif; margin: 24px; color: #222; max-width: 1400px; }
h1 { font-size: 22px; } h2 { font-size: 18px; border-bottom: 1px solid #ccc; padding-bottom: 4px; margin-top: 32px; }
h3 { font-size: 15px; margin-top: 20px; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.fused td:first-child { border-left: 4px solid #3a6ea5; } tr.notfused td:first-child { border-left: 4px solid #c0504d; }
pre { background: #f7f7f7; border: 1px solid #e3e3e3; padding: 8px; font-size: 12px; overflow: auto; max-height: 600px; }
.graph { border: 1px solid #e3e3e3; overflow: auto; max-height: 900px; margin: 8px 0; }
.graph svg { max-width: none; }
.meta { color: #555; font-size: 13px; }
details summary { cursor: pointer; font-weight: bold; margin: 6px 0; }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; }
)CSS";

// A stored graph as inline SVG: the dot text is bounded and rebuilt before layout (graph_layout.h)
// and Graphviz's SVG is checked against the report's markup rules before it is embedded.
std::string svgOf(const std::string& dot, const ReportOptions& o) {
  LayoutLimits limits;
  limits.maxNodes = std::min(limits.maxNodes, o.maxDrawnNodes);
  try {
    std::string svg = renderSvg(dot, limits);
    size_t at = svg.find("<svg");  // drop the XML prologue and DOCTYPE
    svg = at == std::string::npos ? std::string() : svg.substr(at);
    if (std::string problem = markupProblem(svg); !problem.empty())
      return "<p class=meta>graph not drawn: unexpected markup in the layout (" + esc(problem) + ")</p>";
    return "<div class=graph>" + svg + "</div>";
  } catch (const GraphTooLarge& e) {
    if (e.nodes() > o.maxDrawnNodes)
      return "<p class=meta>" + std::to_string(e.nodes()) + " nodes: too large to draw in a report (limit " + std::to_string(o.maxDrawnNodes) +
             "); open the session in the Fusebox GUI.</p>";
    return "<p class=meta>graph not drawn: " + esc(e.what()) + "</p>";
  } catch (const LayoutError& e) {
    return "<p class=meta>graph not drawn: " + esc(e.what()) + "</p>";
  }
}

// Horizontal bars, one per kernel, inline SVG.
std::string barChart(const std::vector<KernelTiming>& ts) {
  if (ts.empty()) return "";
  double max = 0;
  for (const KernelTiming& t : ts) max = std::max(max, t.medianMs);
  const int rowH = 18, labelW = 260, barW = 520;
  std::ostringstream os;
  os << "<svg xmlns='http://www.w3.org/2000/svg' width='" << labelW + barW + 120 << "' height='" << rowH * ts.size() + 8
     << "' font-family='Helvetica' font-size='11'>";
  for (size_t i = 0; i < ts.size(); ++i) {
    double w = max > 0 ? ts[i].medianMs / max * barW : 0;
    int y = static_cast<int>(i) * rowH + 4;
    os << "<text x='0' y='" << y + 12 << "'>" << esc(ts[i].graph + " " + ts[i].kernel) << "</text>"
       << "<rect x='" << labelW << "' y='" << y << "' width='" << std::max(w, 1.0) << "' height='" << rowH - 4
       << "' fill='" << (ts[i].kernel.find("extern") == 0 ? "#d9a441" : "#3a6ea5") << "'/>"
       << "<text x='" << labelW + w + 4 << "' y='" << y + 12 << "'>" << fmt("%.4f ms", ts[i].medianMs) << "</text>";
  }
  os << "</svg>";
  return os.str();
}

// The per-iteration total as a line, inline SVG.
std::string timeline(const std::vector<double>& totals) {
  if (totals.size() < 2) return "";
  double max = *std::max_element(totals.begin(), totals.end()), min = *std::min_element(totals.begin(), totals.end());
  const int w = 700, h = 140, pad = 30;
  std::ostringstream os;
  os << "<svg xmlns='http://www.w3.org/2000/svg' width='" << w + 2 * pad << "' height='" << h + 2 * pad
     << "' font-family='Helvetica' font-size='11'><rect x='" << pad << "' y='" << pad << "' width='" << w << "' height='" << h
     << "' fill='none' stroke='#ccc'/><polyline fill='none' stroke='#3a6ea5' stroke-width='1.5' points='";
  for (size_t i = 0; i < totals.size(); ++i) {
    double x = pad + static_cast<double>(i) / (totals.size() - 1) * w;
    double y = pad + h - (max > min ? (totals[i] - min) / (max - min) : 0.5) * h;
    os << x << "," << y << " ";
  }
  os << "'/><text x='" << pad << "' y='" << pad - 8 << "'>" << fmt("max %.4f ms", max) << "</text><text x='" << pad << "' y='"
     << pad + h + 18 << "'>" << fmt("min %.4f ms", min) << " · " << totals.size() << " iterations</text></svg>";
  return os.str();
}

std::string header(const SessionInfo& s, const SessionStore& store) {
  std::ostringstream os;
  os << "<p class=meta>model <b>" << esc(s.model) << "</b> · " << esc(s.config) << " · created " << esc(s.created) << " · session "
     << s.id << " of " << esc(store.path()) << "</p>";
  return os.str();
}

// Stages in the order they were written (artifacts come in rowid order), their graphs and time.
std::string stageTable(const std::vector<StageArtifact>& artifacts) {
  struct Row {
    std::string stage;
    std::vector<std::string> graphs;
    double ms = 0;
  };
  std::vector<Row> rows;
  for (const StageArtifact& a : artifacts) {
    if (rows.empty() || rows.back().stage != a.stage) rows.push_back({a.stage, {}, a.ms});
    std::vector<std::string>& g = rows.back().graphs;
    if (std::find(g.begin(), g.end(), a.graph) == g.end()) g.push_back(a.graph);
  }
  std::ostringstream os;
  os << "<table><tr><th>stage</th><th>graphs</th><th class=num>ms</th></tr>";
  for (const Row& r : rows) {
    std::string graphs;
    for (const std::string& g : r.graphs) graphs += (graphs.empty() ? "" : ", ") + g;
    os << "<tr><td>" << esc(r.stage) << "</td><td>" << esc(graphs) << "</td><td class=num>" << fmt("%.2f", r.ms) << "</td></tr>";
  }
  os << "</table>";
  return os.str();
}

std::string decisionsTable(const std::vector<StoredDecision>& ds) {
  std::ostringstream os;
  if (ds.empty())  // a run with fusion off, or a session never scheduled: say so, not an empty table
    return "<p class=meta>No fusion decisions recorded: with fusion off (--no-fusion) the scheduler pairs nothing and every "
           "loop-IR node is a kernel of its own; a session that never reached the schedule stage has none either.</p>";
  os << "<table><tr><th>graph</th><th>pair</th><th>kind</th><th>fused</th><th>reason</th><th class=num>score (bytes)</th></tr>";
  for (const StoredDecision& d : ds)
    os << "<tr class=" << (d.fused ? "fused" : "notfused") << "><td>" << esc(d.graph) << "</td><td>n" << d.first << " + n" << d.second
       << "</td><td>" << esc(d.kind) << "</td><td>" << (d.fused ? "yes" : "no") << "</td><td>" << esc(d.reason) << "</td><td class=num>"
       << d.score << "</td></tr>";
  os << "</table>";
  return os.str();
}

std::string timingsTable(const std::vector<KernelTiming>& ts) {
  std::ostringstream os;
  os << "<table><tr><th>graph</th><th>kernel</th><th class=num>median ms</th><th class=num>min ms</th><th class=num>samples</th>"
        "<th class=num>bytes</th><th class=num>GB/s</th></tr>";
  double total = 0;
  for (const KernelTiming& t : ts) {
    total += t.medianMs;
    os << "<tr><td>" << esc(t.graph) << "</td><td>" << esc(t.kernel) << "</td><td class=num>" << fmt("%.4f", t.medianMs)
       << "</td><td class=num>" << fmt("%.4f", t.minMs) << "</td><td class=num>" << t.samples << "</td><td class=num>" << t.bytes
       << "</td><td class=num>" << fmt("%.2f", t.gbPerSec()) << "</td></tr>";
  }
  os << "<tr><th colspan=2>total</th><th class=num>" << fmt("%.4f", total) << "</th><th colspan=4></th></tr></table>";
  return os.str();
}

std::string page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>" + esc(title) + "</title><style>" + kStyle +
         "</style></head><body>\n" + body + "\n<p class=meta>Generated by Fusebox.</p></body></html>\n";
}

// The report's first part: who, what, how long; each stage's time; the profile; the partitions.
void writeSummary(std::ostringstream& os, const SessionStore& store, int64_t session, const SessionInfo& s,
                  const std::vector<StageArtifact>& artifacts, const ReportOptions& options) {
  os << "<h1>Fusebox report: " << esc(s.model) << "</h1>" << header(s, store);
  os << "<h2>Stages</h2>" << stageTable(artifacts);
  std::vector<KernelTiming> ts = latestRunTimings(store, session);
  os << "<h2>Profile</h2>";
  if (ts.empty()) {
    os << "<p class=meta>This session has not been run (fusebox run MODEL --session FILE).</p>";
  } else {
    os << timingsTable(ts) << barChart(ts) << "<h3>Per-iteration kernel time</h3>" << timeline(iterationTotals(store, session));
  }
  if (options.graphs) {
    os << "<h2>Graphs</h2>";
    for (const StageArtifact& a : artifacts)
      if (a.format == "dot") os << "<h3>" << esc(a.stage) << ": " << esc(a.graph) << "</h3>" << svgOf(a.body, options);
  }
  for (const StageArtifact& a : artifacts)
    if (a.stage == "partition" && a.graph == "report") os << "<h3>partition</h3><pre>" << esc(a.body) << "</pre>";
  std::string sides;  // both partitioners side by side (sessions since schema 5)
  for (const StageArtifact& a : artifacts) {
    if (a.stage != "partition" || a.format != "text") continue;
    if (a.graph == "partitioners") os << "<h3>default vs min-cut</h3><p>" << esc(a.body) << "</p>";
    if (a.graph.rfind("partitioner ", 0) == 0) sides += "<td style='vertical-align:top'><pre>" + esc(a.body) + "</pre></td>";
  }
  if (!sides.empty()) os << "<table><tr>" << sides << "</tr></table>";
}

// The source from its first kernel on, after the comment lines that open it (the buffer table).
std::string withoutPrelude(const std::string& body, int ownFrom) {
  if (ownFrom <= 1) return body;
  std::string head, rest;
  size_t at = 0;
  int line = 1;
  bool opening = true;
  int leftOut = 0;
  for (; at < body.size(); ++line) {
    size_t end = body.find('\n', at);
    if (end == std::string::npos) end = body.size();
    std::string_view text(body.data() + at, end - at);
    opening = opening && text.rfind("//", 0) == 0;
    if (opening || line >= ownFrom) (opening ? head : rest).append(text).append("\n");
    else ++leftOut;
    at = end + 1;
  }
  return head + "\n// ... " + std::to_string(leftOut) + " lines of the prelude left out (the helpers every module repeats; the HTML report " +
         "and `fusebox dump MODEL --stage codegen` have them) ...\n\n" + rest;
}

// Its second: every decision, every kernel with its ops, the code, the compile log.
void writeDetails(std::ostringstream& os, const SessionStore& store, int64_t session, const ReportOptions& options) {
  os << "<h2>Fusion decisions</h2>" << decisionsTable(store.decisions(session));
  os << "<h2>Kernels</h2><table><tr><th>graph</th><th>kernel</th><th>loop-IR nodes</th><th class=num>bytes</th><th>ops in order (* recomputed)</th></tr>";
  for (const StoredKernel& k : store.kernels(session)) {
    std::string nodes;
    for (int n : k.nodes) nodes += (nodes.empty() ? "n" : " n") + std::to_string(n);
    os << "<tr><td>" << esc(k.graph) << "</td><td>" << esc(k.name) << "</td><td>" << nodes << "</td><td class=num>" << k.bytes << "</td><td>"
       << esc(opListText(k.ops)) << "</td></tr>";
  }
  os << "</table><h2>Generated code</h2>";
  int leftOut = 0;
  std::string ownLanguage;
  for (const Backend* b : backends())
    if (store.session(session).target == b->name()) ownLanguage = b->language();
  const std::vector<StoredKernelSpan> spans = options.preludeOut ? store.kernelSpans(session) : std::vector<StoredKernelSpan>{};
  for (const StoredSource& src : store.sources(session)) {
    const ListingKindInfo* listing = listingKindNamed(src.kind);
    bool compiled = listing != nullptr;
    bool otherTarget = !compiled && options.ownTargetOnly && src.kind != ownLanguage;
    if ((compiled && !options.compiledCode) || otherTarget) {
      ++leftOut;
      continue;
    }
    std::string body = listing ? readListing(listing->kind, src.body).text : src.body;  // the text only: no links on paper
    if (!listing && options.preludeOut) body = withoutPrelude(body, ownLinesFrom(spans, src.graph, src.kind));
    os << "<details><summary>" << esc(src.graph + " · " + src.kind) << " (" << std::count(body.begin(), body.end(), '\n')
       << " lines)</summary><pre>" << esc(body) << "</pre></details>";
  }
  if (leftOut)
    os << "<p>" << leftOut << " listing(s) left out (other targets' code; LLVM IR, assembly and PTX unless `fusebox report ... --include asm`).</p>";
  std::vector<CompileLog> logs = store.compileLogs(session);
  if (!logs.empty()) {
    os << "<h2>Compile log</h2><table><tr><th>graph</th><th>target</th><th>ok</th><th class=num>ms</th><th>log</th></tr>";
    for (const CompileLog& l : logs)
      os << "<tr><td>" << esc(l.graph) << "</td><td>" << esc(l.target) << "</td><td>" << (l.ok ? "yes" : "FAILED") << "</td><td class=num>"
         << fmt("%.1f", l.ms) << "</td><td><pre>" << esc(l.log) << "</pre></td></tr>";
    os << "</table>";
  }
}

}  // namespace

std::string htmlReport(const SessionStore& store, int64_t session, const ReportOptions& options) {
  SessionInfo s = store.session(session);
  std::ostringstream os;
  const std::vector<StageArtifact> artifacts = store.artifacts(session);  // read once: bodies are large
  const bool summary = options.part != ReportOptions::Part::Details, details = options.part != ReportOptions::Part::Summary;
  if (summary) writeSummary(os, store, session, s, artifacts, options);
  if (details) writeDetails(os, store, session, options);
  return page("Fusebox report: " + s.model, os.str());
}

std::string htmlComparisonReport(const SessionStore& storeA, int64_t a, const SessionStore& storeB, int64_t b, const ReportOptions& options) {
  FusionComparison c = compareSessions(storeA, a, storeB, b);
  std::ostringstream os;
  os << "<h1>Fusebox fusion comparison: " << esc(c.a.model) << (c.a.model != c.b.model ? " vs " + esc(c.b.model) : "") << "</h1>";
  os << "<p class=meta>A: " << esc(c.a.config) << " (" << c.kernelsA << " kernels" << (c.totalMsA > 0 ? ", " + fmt("%.4f ms", c.totalMsA) : "")
     << ")<br>B: " << esc(c.b.config) << " (" << c.kernelsB << " kernels" << (c.totalMsB > 0 ? ", " + fmt("%.4f ms", c.totalMsB) : "") << ")</p>";
  if (c.totalMsA > 0 && c.totalMsB > 0) os << "<p><b>B / A time: " << fmt("%.2fx", c.totalMsB / c.totalMsA) << "</b></p>";
  os << "<p class=meta>Matched by traced provenance: a traced op, a decision or a kernel corresponds to the one on the other side "
        "that computes the same traced ops (loop-IR ids differ between configs).</p>";
  if (c.totalMsA > 0 && c.totalMsB > 0)
    os << "<p>Step time: A " << fmt("%.4f ms", c.totalMsA) << ", B " << fmt("%.4f ms", c.totalMsB) << " (noise &plusmn;" << fmt("%.4f ms", c.totalNoiseMs)
       << ", medians of the per-iteration totals, warm-up left out)</p>";
  os << "<h2>Traced ops computed with different ops (" << c.regrouped.size() << ")</h2>";
  os << "<table><tr><th>graph</th><th>traced op</th><th>A: kernels (computed with)</th><th>B: kernels (computed with)</th></tr>";
  auto with = [](const std::vector<std::string>& kernels, const std::vector<std::string>& mates) {
    if (kernels.empty()) return std::string("not computed");
    std::string k, m;
    for (const std::string& x : kernels) k += (k.empty() ? "" : ", ") + x;
    for (size_t i = 0; i < mates.size() && i < 6; ++i) m += (m.empty() ? "" : ", ") + mates[i];
    if (mates.size() > 6) m += ", … " + std::to_string(mates.size()) + " in all";
    return k + " (" + (m.empty() ? "alone" : m) + ")";
  };
  for (const TracedRegrouping& g : c.regrouped)
    os << "<tr><td>" << esc(g.graph) << "</td><td>" << esc(g.label) << "</td><td>" << esc(with(g.kernelsA, g.matesA)) << "</td><td>"
       << esc(with(g.kernelsB, g.matesB)) << "</td></tr>";
  os << "</table><h2>Decisions that differ (" << c.decisions.size() << ")</h2>";
  os << "<table><tr><th>graph</th><th>pair (what it computes)</th><th>kind</th><th>A</th><th>B</th></tr>";
  auto side = [&](const std::string& nodes, const std::string& reason, bool fused) {
    return reason.empty() ? std::string("not considered") : esc(nodes) + (fused ? ": fused: " : ": ") + esc(reason);
  };
  for (const DecisionDiff& d : c.decisions)
    os << "<tr><td>" << esc(d.graph) << "</td><td>" << esc(d.what) << "</td><td>" << esc(d.kind) << "</td><td>" << side(d.nodesA, d.reasonA, d.fusedA)
       << "</td><td>" << side(d.nodesB, d.reasonB, d.fusedB) << "</td></tr>";
  if (!c.kernels.empty()) {
    os << "</table><h2>Kernel time changes</h2><p class=meta>Kernels paired by the traced ops they compute; a change smaller than the noise "
          "band (half of both runs' p10-p90 spreads) is noise.</p>";
    os << "<table><tr><th>graph</th><th>A kernel</th><th>B kernel</th><th class=num>A ms</th><th class=num>B ms</th><th class=num>B - A ms</th>"
          "<th class=num>noise &plusmn; ms</th><th>verdict</th><th class=num>same ops</th></tr>";
    for (const KernelDelta& d : c.kernels) {
      std::string verdict = !d.paired() ? (d.kernelA.empty() ? "only in B" : "only in A") : !d.beyondNoise() ? "within noise" : d.msB > d.msA ? "<b>B slower</b>" : "<b>B faster</b>";
      os << "<tr><td>" << esc(d.graph) << "</td><td>" << esc(d.kernelA) << "</td><td>" << esc(d.kernelB) << "</td><td class=num>"
         << (d.kernelA.empty() ? "" : fmt("%.4f", d.msA)) << "</td><td class=num>" << (d.kernelB.empty() ? "" : fmt("%.4f", d.msB)) << "</td><td class=num>"
         << fmt("%+.4f", d.msB - d.msA) << "</td><td class=num>" << fmt("%.4f", d.noiseMs) << "</td><td>" << verdict << "</td><td class=num>"
         << (d.paired() ? fmt("%.0f%%", d.overlap * 100) : "") << "</td></tr>";
    }
  }
  os << "</table><h2>Kernel times</h2><div class=sides><div><h3>A</h3>" << timingsTable(c.timingsA) << barChart(c.timingsA)
     << "</div><div><h3>B</h3>" << timingsTable(c.timingsB) << barChart(c.timingsB) << "</div></div>";
  if (options.graphs) {
    os << "<h2>Fused loop IR</h2><div class=sides><div>";
    for (const StageArtifact& x : storeA.artifacts(a))
      if (x.stage == "schedule" && x.format == "dot") os << "<h3>A: " << esc(x.graph) << "</h3>" << svgOf(x.body, options);
    os << "</div><div>";
    for (const StageArtifact& x : storeB.artifacts(b))
      if (x.stage == "schedule" && x.format == "dot") os << "<h3>B: " << esc(x.graph) << "</h3>" << svgOf(x.body, options);
    os << "</div></div>";
  }
  return page("Fusebox comparison: " + c.a.model, os.str());
}

}  // namespace fusebox

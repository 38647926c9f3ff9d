// Reads of the rows schema 3 added for the inspector's views (graph nodes, kernel spans, schedule
// summaries), and a stage's whole record read back: what the GUI builds a stage's view from, so
// a stored session can be shown without running the pipeline again.
#include "core/backend/backend.h"
#include "core/pipeline/stage_table.h"
#include "sessions/session_db.h"
#include "sessions/session_store.h"

namespace fusebox {

namespace {

constexpr int kMaxLine = (1 << 30) - 1;

// Whether a stored source is generated code (a backend's language), not a compiler's output.
bool isGeneratedSource(const StoredSource& s) {
  for (const Backend* b : backends())
    if (s.kind == b->language()) return true;
  return false;
}

}  // namespace

std::vector<StoredNode> SessionStore::nodes(int64_t session, const std::string& stage) const {
  std::vector<StoredNode> out;
  if (db_->version < 3) return out;  // a file from before graph nodes were stored, opened read-only
  Statement st(*db_, "graph_node", "SELECT rowid, stage, graph, node, origins, scope FROM graph_node WHERE session_id = ? AND stage = ? ORDER BY rowid");
  st.bind(session, stage);
  while (st.step()) out.push_back({st.text(1, "stage"), st.text(2, "graph"), st.text(3, "node"), st.ids<int64_t>(4, "origins"), st.text(5, "scope")});
  return out;
}

std::vector<StoredKernelSpan> SessionStore::kernelSpans(int64_t session) const {
  std::vector<StoredKernelSpan> out;
  if (db_->version < 3) return out;
  Statement st(*db_, "kernel_span",
               "SELECT rowid, graph, kind, kernel_id, name, first_line, last_line, provenance FROM kernel_span WHERE session_id = ? ORDER BY rowid");
  st.bind(session);
  while (st.step()) {
    StoredKernelSpan k{st.text(1, "graph"), st.text(2, "kind"), st.i32(3, "kernel_id"), st.text(4, "name"),
                       st.i32(5, "first_line", 0, kMaxLine), st.i32(6, "last_line", 0, kMaxLine), st.ids<int64_t>(7, "provenance")};
    if (k.lastLine < k.firstLine) st.bad("last_line", std::to_string(k.lastLine) + " is before first_line " + std::to_string(k.firstLine));
    out.push_back(std::move(k));
  }
  return out;
}

std::vector<StoredSchedule> SessionStore::schedules(int64_t session) const {
  std::vector<StoredSchedule> out;
  if (db_->version < 3) return out;
  bool curves = db_->version >= 5;  // the memory plan per kernel
  Statement st(*db_, "schedule_summary",
               curves ? "SELECT rowid, graph, program, peak_bytes, live_bytes, allocated_bytes FROM schedule_summary WHERE session_id = ? ORDER BY rowid"
                      : "SELECT rowid, graph, program, peak_bytes FROM schedule_summary WHERE session_id = ? ORDER BY rowid");
  st.bind(session);
  while (st.step())
    out.push_back({st.text(1, "graph"), st.text(2, "program"), st.i64(3, "peak_bytes", 0), curves ? st.byteCounts(4, "live_bytes") : std::vector<int64_t>{},
                   curves ? st.byteCounts(5, "allocated_bytes") : std::vector<int64_t>{}});
  return out;
}

StageRecord SessionStore::stageRecord(int64_t session, const std::string& stage) const {
  std::optional<Stage> s = parseStage(stage);
  if (!s) throw SessionError(path_ + ": no pipeline stage is named '" + stage.substr(0, 80) + "'");
  StageRecord r;
  r.artifacts = artifacts(session, stage);
  r.nodes = nodes(session, stage);
  switch (stageDescriptor(*s).output) {
    case StageOutput::Schedules:
      r.decisions = decisions(session);
      r.kernels = kernels(session);
      r.schedules = schedules(session);
      break;
    case StageOutput::Code:
      for (StoredSource& src : sources(session))
        if (isGeneratedSource(src)) r.sources.push_back(std::move(src));
      r.spans = kernelSpans(session);
      break;
    case StageOutput::Graphs:
    case StageOutput::LoopPrograms: break;
  }
  return r;
}

}  // namespace fusebox

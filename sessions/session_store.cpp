// Reads and writes of every artifact. Opening (creation, migration, read-only access) is in
// session_open.cpp; the connection and the validating statement in session_db.cpp.
#include "sessions/session_store.h"

#include <ctime>
#include <map>
#include <utility>

#include "sessions/session_db.h"
#include "sessions/session_schema.h"

namespace fusebox {

namespace {

template <class T>
std::string joinInts(const std::vector<T>& v) {
  std::string s;
  for (T x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

std::string nowUtc() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

SessionInfo sessionRow(const Statement& st, int version) {
  SessionInfo s{st.i64(0, "id", 1), st.text(1, "model"), st.text(2, "config"), st.text(3, "target"), st.text(4, "created"), "", "", ""};
  if (version >= 4) {
    s.name = st.text(5, "name", kMaxSessionNameBytes);
    s.notes = st.text(6, "notes", kMaxSessionNotesBytes);
    s.tags = st.text(7, "tags", kMaxSessionTagsBytes);
  }
  return s;
}

// The session columns this file has (a read-only store of an older file is not migrated).
const char* sessionColumns(int version) {
  return version >= 4 ? "id, model, config, target, created, name, notes, tags" : "id, model, config, target, created";
}

StageArtifact artifactRow(const Statement& st) {
  return {st.text(1, "stage"), st.text(2, "graph"), st.text(3, "format"), st.text(4, "body", kMaxBodyBytes), st.ms(5, "ms")};
}

}  // namespace

SessionStore::SessionStore(std::unique_ptr<Db> db, std::string path) : db_(std::move(db)), path_(std::move(path)) {}
SessionStore::SessionStore(SessionStore&&) noexcept = default;
SessionStore& SessionStore::operator=(SessionStore&&) noexcept = default;
SessionStore::~SessionStore() = default;

int SessionStore::schemaVersion() { return static_cast<int>(sessionMigrations().size()); }
bool SessionStore::readOnly() const { return db_->readOnly; }

int64_t SessionStore::createSession(const std::string& model, const std::string& config, const std::string& target) {
  Transaction t(*db_);
  Statement(*db_, "session", "INSERT INTO session(model, config, target, created) VALUES (?, ?, ?, ?)").bind(model, config, target, nowUtc()).run();
  int64_t id = sqlite3_last_insert_rowid(db_->handle);
  t.commit();
  return id;
}

std::vector<SessionInfo> SessionStore::sessions() const {
  std::vector<SessionInfo> out;
  const std::string sql = std::string("SELECT ") + sessionColumns(db_->version) + " FROM session ORDER BY id";
  Statement st(*db_, "session", sql.c_str());
  while (st.step()) out.push_back(sessionRow(st, db_->version));
  return out;
}

SessionInfo SessionStore::session(int64_t id) const {
  const std::string sql = std::string("SELECT ") + sessionColumns(db_->version) + " FROM session WHERE id = ?";
  Statement st(*db_, "session", sql.c_str());
  st.bind(id);
  if (!st.step()) throw SessionError(path_ + ": no session " + std::to_string(id));
  return sessionRow(st, db_->version);
}

std::map<int64_t, SessionStats> SessionStore::sessionStats() const {
  std::map<int64_t, SessionStats> out;
  Statement kernels(*db_, "kernel", "SELECT session_id, count(*) FROM kernel GROUP BY session_id");
  while (kernels.step()) out[kernels.i64(0, "session_id", 1)].kernels = kernels.i32(1, "count", 0, INT32_MAX);
  // per session and run, each iteration's kernel total; the latest run's mean
  Statement totals(*db_, "profile_sample",
                   "SELECT session_id, run, count(DISTINCT iteration), sum(ms) FROM profile_sample GROUP BY session_id, run ORDER BY session_id, run");
  while (totals.step()) {
    SessionStats& s = out[totals.i64(0, "session_id", 1)];
    ++s.runs;
    int64_t iterations = totals.i64(2, "iteration", 1);
    s.msPerStep = totals.ms(3, "ms") / static_cast<double>(iterations);
  }
  return out;
}

void SessionStore::annotateSession(int64_t id, const std::string& name, const std::string& notes, const std::string& tags) {
  if (name.size() > kMaxSessionNameBytes || notes.size() > kMaxSessionNotesBytes || tags.size() > kMaxSessionTagsBytes)
    throw SessionError(path_ + ": session " + std::to_string(id) + ": name, notes or tags too long (at most " +
                       std::to_string(kMaxSessionNameBytes) + ", " + std::to_string(kMaxSessionNotesBytes) + " and " +
                       std::to_string(kMaxSessionTagsBytes) + " bytes)");
  Transaction t(*db_);
  session(id);  // throws naming the file when absent
  Statement(*db_, "session", "UPDATE session SET name = ?, notes = ?, tags = ? WHERE id = ?").bind(name, notes, tags, id).run();
  t.commit();
}

void SessionStore::deleteSession(int64_t id) {
  Transaction t(*db_);
  session(id);
  // every table but the shared layout cache refers to the session ON DELETE CASCADE
  Statement(*db_, "session", "DELETE FROM session WHERE id = ?").bind(id).run();
  t.commit();
}

std::optional<int64_t> SessionStore::latestSession() const {
  Statement count(*db_, "session", "SELECT count(*), coalesce(max(id), 0) FROM session");
  count.step();
  if (count.raw(0) == 0) return std::nullopt;
  return count.raw(1);
}

void SessionStore::writeStage(int64_t session, const StageRecord& r) {
  Transaction t(*db_);
  Statement art(*db_, "artifact", "INSERT OR REPLACE INTO artifact(session_id, stage, graph, format, body, ms) VALUES (?, ?, ?, ?, ?, ?)");
  for (const StageArtifact& a : r.artifacts) art.bind(session, a.stage, a.graph, a.format, a.body, a.ms).run();
  Statement dec(*db_, "decision", "INSERT INTO decision(session_id, graph, first, second, kind, fused, reason, score) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  for (const StoredDecision& d : r.decisions) dec.bind(session, d.graph, d.first, d.second, d.kind, d.fused, d.reason, d.score).run();
  Statement ker(*db_, "kernel", "INSERT INTO kernel(session_id, graph, kernel_id, name, nodes, provenance, bytes) VALUES (?, ?, ?, ?, ?, ?, ?)");
  for (const StoredKernel& k : r.kernels)
    ker.bind(session, k.graph, k.kernelId, k.name, joinInts(k.nodes), joinInts(k.provenance), k.bytes).run();
  Statement src(*db_, "source", "INSERT OR REPLACE INTO source(session_id, graph, kind, body) VALUES (?, ?, ?, ?)");
  for (const StoredSource& s : r.sources) src.bind(session, s.graph, s.kind, s.body).run();
  Statement op(*db_, "kernel_op", "INSERT INTO kernel_op(session_id, graph, kernel_id, node, op, recomputed) VALUES (?, ?, ?, ?, ?, ?)");
  for (const StoredKernel& k : r.kernels)
    for (const StoredKernelOp& o : k.ops) op.bind(session, k.graph, k.kernelId, o.node, o.op, o.recomputed).run();
  Statement node(*db_, "graph_node", "INSERT OR REPLACE INTO graph_node(session_id, stage, graph, node, origins, scope) VALUES (?, ?, ?, ?, ?, ?)");
  for (const StoredNode& n : r.nodes) node.bind(session, n.stage, n.graph, n.node, joinInts(n.origins), n.scope).run();
  Statement span(*db_, "kernel_span",
                 "INSERT INTO kernel_span(session_id, graph, kind, kernel_id, name, first_line, last_line, provenance) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  for (const StoredKernelSpan& k : r.spans)
    span.bind(session, k.graph, k.kind, k.kernelId, k.name, k.firstLine, k.lastLine, joinInts(k.provenance)).run();
  Statement sched(*db_, "schedule_summary",
                  "INSERT OR REPLACE INTO schedule_summary(session_id, graph, program, peak_bytes, live_bytes, allocated_bytes) VALUES (?, ?, ?, ?, ?, ?)");
  for (const StoredSchedule& sc : r.schedules)
    sched.bind(session, sc.graph, sc.program, sc.peakBytes, joinInts(sc.liveBytes), joinInts(sc.allocatedBytes)).run();
  t.commit();
}

void SessionStore::writeSources(int64_t session, const std::vector<StoredSource>& sources) {
  StageRecord r;
  r.sources = sources;
  writeStage(session, r);
}

void SessionStore::writeCompileLog(int64_t session, const CompileLog& l) {
  Transaction t(*db_);
  Statement(*db_, "compile_log", "INSERT INTO compile_log(session_id, graph, target, ok, log, ms) VALUES (?, ?, ?, ?, ?, ?)")
      .bind(session, l.graph, l.target, l.ok, l.log, l.ms)
      .run();
  t.commit();
}

int SessionStore::beginRun(int64_t session) {
  Statement st(*db_, "profile_sample", "SELECT coalesce(max(run), 0) FROM profile_sample WHERE session_id = ?");
  st.bind(session);
  st.step();
  return static_cast<int>(st.i64(0, "run", 0, (1 << 30) - 1)) + 1;
}

void SessionStore::appendProfile(int64_t session, const std::vector<ProfileSample>& samples) {
  Transaction t(*db_);
  Statement st(*db_, "profile_sample",
               "INSERT INTO profile_sample(session_id, run, graph, kernel, iteration, ms, bytes, start_ms, launch_ms) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (const ProfileSample& s : samples) {
    st.bind(session, s.run, s.graph, s.kernel, s.iteration, s.ms, s.bytes, s.startMs, s.launchMs);
    if (s.startMs < 0) st.bindNull(8);  // not recorded
    if (s.launchMs < 0) st.bindNull(9);
    st.run();
  }
  t.commit();
}

std::optional<std::string> SessionStore::cachedLayout(const std::string& dotHash) const {
  if (db_->version < 2) return std::nullopt;  // a version-1 file opened read-only has no cache
  Statement st(*db_, "layout_cache", "SELECT rowid, layout FROM layout_cache WHERE dot_hash = ?");
  st.bind(dotHash);
  if (!st.step()) return std::nullopt;
  return st.text(1, "layout", kMaxBodyBytes);
}

void SessionStore::cacheLayout(const std::string& dotHash, const std::string& layout) {
  if (db_->readOnly) return;  // a cache: a read-only file simply does not keep it
  Transaction t(*db_);
  Statement(*db_, "layout_cache", "INSERT OR REPLACE INTO layout_cache(dot_hash, layout) VALUES (?, ?)").bind(dotHash, layout).run();
  t.commit();
}

std::vector<StageArtifact> SessionStore::artifacts(int64_t session) const {
  std::vector<StageArtifact> out;
  Statement st(*db_, "artifact", "SELECT rowid, stage, graph, format, body, ms FROM artifact WHERE session_id = ? ORDER BY rowid");
  st.bind(session);
  while (st.step()) out.push_back(artifactRow(st));
  return out;
}

std::vector<StageArtifact> SessionStore::artifacts(int64_t session, const std::string& stage) const {
  std::vector<StageArtifact> out;
  Statement st(*db_, "artifact", "SELECT rowid, stage, graph, format, body, ms FROM artifact WHERE session_id = ? AND stage = ? ORDER BY rowid");
  st.bind(session, stage);
  while (st.step()) out.push_back(artifactRow(st));
  return out;
}

std::optional<StageArtifact> SessionStore::artifact(int64_t session, const std::string& stage, const std::string& graph,
                                                    const std::string& format) const {
  Statement st(*db_, "artifact",
               "SELECT rowid, stage, graph, format, body, ms FROM artifact WHERE session_id = ? AND stage = ? AND graph = ? AND format = ?");
  st.bind(session, stage, graph, format);
  if (!st.step()) return std::nullopt;
  return artifactRow(st);
}

std::vector<std::string> SessionStore::stagesDone(int64_t session) const {
  std::vector<std::string> out;
  Statement st(*db_, "artifact", "SELECT stage FROM artifact WHERE session_id = ? GROUP BY stage ORDER BY min(rowid)");
  st.bind(session);
  while (st.step()) out.push_back(st.text(0, "stage"));
  return out;
}

std::vector<StoredDecision> SessionStore::decisions(int64_t session) const {
  std::vector<StoredDecision> out;
  Statement st(*db_, "decision", "SELECT rowid, graph, first, second, kind, fused, reason, score FROM decision WHERE session_id = ? ORDER BY rowid");
  st.bind(session);
  while (st.step())
    out.push_back({st.text(1, "graph"), st.i32(2, "first"), st.i32(3, "second"), st.text(4, "kind"), st.flag(5, "fused"),
                   st.text(6, "reason"), st.i64(7, "score")});
  return out;
}

std::vector<StoredKernel> SessionStore::kernels(int64_t session) const {
  std::vector<StoredKernel> out;
  Statement st(*db_, "kernel", "SELECT rowid, graph, kernel_id, name, nodes, provenance, bytes FROM kernel WHERE session_id = ? ORDER BY rowid");
  st.bind(session);
  while (st.step())
    out.push_back({st.text(1, "graph"), st.i32(2, "kernel_id"), st.text(3, "name"), st.ids<int>(4, "nodes"), st.ids<int64_t>(5, "provenance"),
                   st.i64(6, "bytes", 0), {}});
  if (db_->version < 3) return out;  // a file from before kernel op lists, opened read-only
  std::map<std::pair<std::string, int>, size_t> byId;
  for (size_t i = 0; i < out.size(); ++i) byId.emplace(std::make_pair(out[i].graph, out[i].kernelId), i);
  bool marks = db_->version >= 5;  // older files know no recomputed ops
  Statement ops(*db_, "kernel_op",
                marks ? "SELECT rowid, graph, kernel_id, node, op, recomputed FROM kernel_op WHERE session_id = ? ORDER BY rowid"
                      : "SELECT rowid, graph, kernel_id, node, op FROM kernel_op WHERE session_id = ? ORDER BY rowid");
  ops.bind(session);
  while (ops.step()) {
    auto k = byId.find({ops.text(1, "graph"), ops.i32(2, "kernel_id")});
    if (k == byId.end()) ops.bad("kernel_id", "names no kernel of the session");
    out[k->second].ops.push_back({ops.i32(3, "node"), ops.text(4, "op"), marks && ops.i64(5, "recomputed", 0) != 0});
  }
  return out;
}

std::vector<StoredSource> SessionStore::sources(int64_t session) const {
  std::vector<StoredSource> out;
  Statement st(*db_, "source", "SELECT rowid, graph, kind, body FROM source WHERE session_id = ? ORDER BY rowid");
  st.bind(session);
  while (st.step()) out.push_back({st.text(1, "graph"), st.text(2, "kind"), st.text(3, "body", kMaxBodyBytes)});
  return out;
}

std::vector<CompileLog> SessionStore::compileLogs(int64_t session) const {
  std::vector<CompileLog> out;
  Statement st(*db_, "compile_log", "SELECT rowid, graph, target, ok, log, ms FROM compile_log WHERE session_id = ? ORDER BY rowid");
  st.bind(session);
  while (st.step())
    out.push_back({st.text(1, "graph"), st.text(2, "target"), st.flag(3, "ok"), st.text(4, "log", kMaxBodyBytes), st.ms(5, "ms")});
  return out;
}

std::vector<ProfileSample> SessionStore::profile(int64_t session, int64_t after, int64_t* last) const {
  std::vector<ProfileSample> out;
  bool starts = db_->version >= 5, launches = db_->version >= 6;  // when each kernel began; when the host issued it
  Statement st(*db_, "profile_sample",
               launches ? "SELECT rowid, run, graph, kernel, iteration, ms, bytes, start_ms, launch_ms FROM profile_sample WHERE session_id = ? AND rowid > ? ORDER BY rowid"
               : starts ? "SELECT rowid, run, graph, kernel, iteration, ms, bytes, start_ms FROM profile_sample WHERE session_id = ? AND rowid > ? ORDER BY rowid"
                        : "SELECT rowid, run, graph, kernel, iteration, ms, bytes FROM profile_sample WHERE session_id = ? AND rowid > ? ORDER BY rowid");
  st.bind(session, after);
  int64_t max = after;
  while (st.step()) {
    max = st.raw(0);
    out.push_back({st.i32(1, "run", 1, (1 << 30) - 1), st.text(2, "graph"), st.text(3, "kernel"), st.i32(4, "iteration"), st.ms(5, "ms"),
                   st.i64(6, "bytes", 0), starts ? st.msOrMissing(7, "start_ms") : -1, launches ? st.msOrMissing(8, "launch_ms") : -1});
  }
  if (last) *last = max;
  return out;
}

}  // namespace fusebox

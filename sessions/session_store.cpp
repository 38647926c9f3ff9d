#include "sessions/session_store.h"

#include <sqlite3.h>

#include <ctime>
#include <sstream>
#include <utility>

#include "sessions/session_schema.h"

namespace fusebox {

struct SessionStore::Db {
  sqlite3* handle = nullptr;
  std::string path;
  ~Db() {
    if (handle) sqlite3_close_v2(handle);
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw SessionError(path + ": " + what + ": " + (handle ? sqlite3_errmsg(handle) : "cannot open"));
  }
  void exec(const char* sql, const std::string& what) {
    char* err = nullptr;
    if (sqlite3_exec(handle, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "unknown error";
      sqlite3_free(err);
      throw SessionError(path + ": " + what + ": " + msg);
    }
  }
};

namespace {

// A prepared statement with positional binding: Statement(db, sql).bind(a, b, ...).
class Statement {
public:
  Statement(SessionStore::Db& db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db.handle, sql, -1, &st_, nullptr) != SQLITE_OK) db.fail("cannot prepare a query");
  }
  ~Statement() { sqlite3_finalize(st_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  template <class... T>
  Statement& bind(const T&... values) {
    sqlite3_reset(st_);
    int i = 0;
    (bindOne(++i, values), ...);
    return *this;
  }
  bool step() {  // true while a row is available
    int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    db_.fail("query failed");
  }
  void run() {
    while (step()) {
    }
  }
  int64_t i64(int c) const { return sqlite3_column_int64(st_, c); }
  double f64(int c) const { return sqlite3_column_double(st_, c); }
  std::string text(int c) const {
    const unsigned char* t = sqlite3_column_text(st_, c);
    return t ? std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(st_, c))) : std::string();
  }

private:
  void bindOne(int i, int64_t v) { sqlite3_bind_int64(st_, i, v); }
  void bindOne(int i, int v) { sqlite3_bind_int64(st_, i, v); }
  void bindOne(int i, bool v) { sqlite3_bind_int64(st_, i, v ? 1 : 0); }
  void bindOne(int i, double v) { sqlite3_bind_double(st_, i, v); }
  void bindOne(int i, const std::string& v) { sqlite3_bind_text(st_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT); }
  void bindOne(int i, const char* v) { sqlite3_bind_text(st_, i, v, -1, SQLITE_TRANSIENT); }

  SessionStore::Db& db_;
  sqlite3_stmt* st_ = nullptr;
};

// BEGIN IMMEDIATE ... COMMIT, rolled back when the scope is left by an exception.
class Transaction {
public:
  explicit Transaction(SessionStore::Db& db) : db_(db) { db_.exec("BEGIN IMMEDIATE", "cannot start a transaction"); }
  ~Transaction() {
    if (!done_) sqlite3_exec(db_.handle, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  void commit() {
    db_.exec("COMMIT", "cannot commit");
    done_ = true;
  }

private:
  SessionStore::Db& db_;
  bool done_ = false;
};

template <class T>
std::string joinInts(const std::vector<T>& v) {
  std::string s;
  for (T x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

template <class T>
std::vector<T> splitInts(const std::string& s) {
  std::vector<T> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ','))
    if (!part.empty()) out.push_back(static_cast<T>(std::stoll(part)));
  return out;
}

int64_t pragmaInt(SessionStore::Db& db, const char* sql) {
  Statement st(db, sql);
  return st.step() ? st.i64(0) : 0;
}

void migrate(SessionStore::Db& db) {
  int64_t app = pragmaInt(db, "PRAGMA application_id");
  int64_t version = pragmaInt(db, "PRAGMA user_version");
  bool empty = pragmaInt(db, "SELECT count(*) FROM sqlite_master") == 0;
  if (app != kSessionApplicationId && !(app == 0 && version == 0 && empty))
    throw SessionError(db.path + ": not a Fusebox session file (a SQLite database of another program)");
  const auto& migrations = sessionMigrations();
  if (version > static_cast<int64_t>(migrations.size()))
    throw SessionError(db.path + ": session schema version " + std::to_string(version) + " is newer than this Fusebox (" +
                       std::to_string(migrations.size()) + "); update Fusebox to open it");
  for (size_t v = static_cast<size_t>(version); v < migrations.size(); ++v) {
    Transaction t(db);
    db.exec(migrations[v], "migration to schema version " + std::to_string(v + 1) + " failed");
    std::string set = "PRAGMA user_version = " + std::to_string(v + 1) + "; PRAGMA application_id = " + std::to_string(kSessionApplicationId);
    db.exec(set.c_str(), "cannot record the schema version");
    t.commit();
  }
}

std::string nowUtc() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

SessionStore SessionStore::open(const std::string& path, bool create) {
  auto db = std::make_unique<Db>();
  db->path = path;
  int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path.c_str(), &db->handle, flags, nullptr) != SQLITE_OK)
    db->fail(create ? "cannot create or open the session file" : "cannot open the session file");
  sqlite3_busy_timeout(db->handle, 5000);
  sqlite3_extended_result_codes(db->handle, 1);
  // The first read tells a non-database file apart ("file is not a database").
  db->exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;", "not a readable session file");
  migrate(*db);
  Statement check(*db, "PRAGMA quick_check");
  if (check.step() && check.text(0) != "ok") throw SessionError(path + ": the session file is damaged: " + check.text(0));
  return SessionStore(std::move(db), path);
}

SessionStore::SessionStore(std::unique_ptr<Db> db, std::string path) : db_(std::move(db)), path_(std::move(path)) {}
SessionStore::SessionStore(SessionStore&&) noexcept = default;
SessionStore& SessionStore::operator=(SessionStore&&) noexcept = default;
SessionStore::~SessionStore() = default;

int SessionStore::schemaVersion() { return static_cast<int>(sessionMigrations().size()); }

int64_t SessionStore::createSession(const std::string& model, const std::string& config, const std::string& target) {
  Statement(*db_, "INSERT INTO session(model, config, target, created) VALUES (?, ?, ?, ?)").bind(model, config, target, nowUtc()).run();
  return sqlite3_last_insert_rowid(db_->handle);
}

std::vector<SessionInfo> SessionStore::sessions() const {
  std::vector<SessionInfo> out;
  Statement st(*db_, "SELECT id, model, config, target, created FROM session ORDER BY id");
  while (st.step()) out.push_back({st.i64(0), st.text(1), st.text(2), st.text(3), st.text(4)});
  return out;
}

SessionInfo SessionStore::session(int64_t id) const {
  Statement st(*db_, "SELECT id, model, config, target, created FROM session WHERE id = ?");
  st.bind(id);
  if (!st.step()) throw SessionError(path_ + ": no session " + std::to_string(id));
  return {st.i64(0), st.text(1), st.text(2), st.text(3), st.text(4)};
}

std::optional<int64_t> SessionStore::latestSession() const {
  Statement count(*db_, "SELECT count(*), coalesce(max(id), 0) FROM session");
  count.step();
  if (count.i64(0) == 0) return std::nullopt;
  return count.i64(1);
}

void SessionStore::writeStage(int64_t session, const StageRecord& r) {
  Transaction t(*db_);
  Statement art(*db_, "INSERT OR REPLACE INTO artifact(session_id, stage, graph, format, body, ms) VALUES (?, ?, ?, ?, ?, ?)");
  for (const StageArtifact& a : r.artifacts) art.bind(session, a.stage, a.graph, a.format, a.body, a.ms).run();
  Statement dec(*db_, "INSERT INTO decision(session_id, graph, first, second, kind, fused, reason, score) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  for (const StoredDecision& d : r.decisions) dec.bind(session, d.graph, d.first, d.second, d.kind, d.fused, d.reason, d.score).run();
  Statement ker(*db_, "INSERT INTO kernel(session_id, graph, kernel_id, name, nodes, provenance, bytes) VALUES (?, ?, ?, ?, ?, ?, ?)");
  for (const StoredKernel& k : r.kernels)
    ker.bind(session, k.graph, k.kernelId, k.name, joinInts(k.nodes), joinInts(k.provenance), k.bytes).run();
  Statement src(*db_, "INSERT OR REPLACE INTO source(session_id, graph, kind, body) VALUES (?, ?, ?, ?)");
  for (const StoredSource& s : r.sources) src.bind(session, s.graph, s.kind, s.body).run();
  t.commit();
}

void SessionStore::writeSources(int64_t session, const std::vector<StoredSource>& sources) {
  StageRecord r;
  r.sources = sources;
  writeStage(session, r);
}

void SessionStore::writeCompileLog(int64_t session, const CompileLog& l) {
  Statement(*db_, "INSERT INTO compile_log(session_id, graph, target, ok, log, ms) VALUES (?, ?, ?, ?, ?, ?)")
      .bind(session, l.graph, l.target, l.ok, l.log, l.ms)
      .run();
}

int SessionStore::beginRun(int64_t session) {
  Statement st(*db_, "SELECT coalesce(max(run), 0) FROM profile_sample WHERE session_id = ?");
  st.bind(session);
  st.step();
  return static_cast<int>(st.i64(0)) + 1;
}

void SessionStore::appendProfile(int64_t session, const std::vector<ProfileSample>& samples) {
  Transaction t(*db_);
  Statement st(*db_, "INSERT INTO profile_sample(session_id, run, graph, kernel, iteration, ms, bytes) VALUES (?, ?, ?, ?, ?, ?, ?)");
  for (const ProfileSample& s : samples) st.bind(session, s.run, s.graph, s.kernel, s.iteration, s.ms, s.bytes).run();
  t.commit();
}

std::optional<std::string> SessionStore::cachedLayout(const std::string& dotHash) const {
  Statement st(*db_, "SELECT layout FROM layout_cache WHERE dot_hash = ?");
  st.bind(dotHash);
  if (!st.step()) return std::nullopt;
  return st.text(0);
}

void SessionStore::cacheLayout(const std::string& dotHash, const std::string& layout) {
  Statement(*db_, "INSERT OR REPLACE INTO layout_cache(dot_hash, layout) VALUES (?, ?)").bind(dotHash, layout).run();
}

std::vector<StageArtifact> SessionStore::artifacts(int64_t session) const {
  std::vector<StageArtifact> out;
  Statement st(*db_, "SELECT stage, graph, format, body, ms FROM artifact WHERE session_id = ? ORDER BY rowid");
  st.bind(session);
  while (st.step()) out.push_back({st.text(0), st.text(1), st.text(2), st.text(3), st.f64(4)});
  return out;
}

std::optional<StageArtifact> SessionStore::artifact(int64_t session, const std::string& stage, const std::string& graph,
                                                    const std::string& format) const {
  Statement st(*db_, "SELECT stage, graph, format, body, ms FROM artifact WHERE session_id = ? AND stage = ? AND graph = ? AND format = ?");
  st.bind(session, stage, graph, format);
  if (!st.step()) return std::nullopt;
  return StageArtifact{st.text(0), st.text(1), st.text(2), st.text(3), st.f64(4)};
}

std::vector<std::string> SessionStore::stagesDone(int64_t session) const {
  std::vector<std::string> out;
  Statement st(*db_, "SELECT stage FROM artifact WHERE session_id = ? GROUP BY stage ORDER BY min(rowid)");
  st.bind(session);
  while (st.step()) out.push_back(st.text(0));
  return out;
}

std::vector<StoredDecision> SessionStore::decisions(int64_t session) const {
  std::vector<StoredDecision> out;
  Statement st(*db_, "SELECT graph, first, second, kind, fused, reason, score FROM decision WHERE session_id = ? ORDER BY rowid");
  st.bind(session);
  while (st.step())
    out.push_back({st.text(0), static_cast<int>(st.i64(1)), static_cast<int>(st.i64(2)), st.text(3), st.i64(4) != 0, st.text(5), st.i64(6)});
  return out;
}

std::vector<StoredKernel> SessionStore::kernels(int64_t session) const {
  std::vector<StoredKernel> out;
  Statement st(*db_, "SELECT graph, kernel_id, name, nodes, provenance, bytes FROM kernel WHERE session_id = ? ORDER BY rowid");
  st.bind(session);
  while (st.step())
    out.push_back({st.text(0), static_cast<int>(st.i64(1)), st.text(2), splitInts<int>(st.text(3)), splitInts<int64_t>(st.text(4)), st.i64(5)});
  return out;
}

std::vector<StoredSource> SessionStore::sources(int64_t session) const {
  std::vector<StoredSource> out;
  Statement st(*db_, "SELECT graph, kind, body FROM source WHERE session_id = ? ORDER BY rowid");
  st.bind(session);
  while (st.step()) out.push_back({st.text(0), st.text(1), st.text(2)});
  return out;
}

std::vector<CompileLog> SessionStore::compileLogs(int64_t session) const {
  std::vector<CompileLog> out;
  Statement st(*db_, "SELECT graph, target, ok, log, ms FROM compile_log WHERE session_id = ? ORDER BY rowid");
  st.bind(session);
  while (st.step()) out.push_back({st.text(0), st.text(1), st.i64(2) != 0, st.text(3), st.f64(4)});
  return out;
}

std::vector<ProfileSample> SessionStore::profile(int64_t session, int64_t after, int64_t* last) const {
  std::vector<ProfileSample> out;
  Statement st(*db_,
               "SELECT rowid, run, graph, kernel, iteration, ms, bytes FROM profile_sample WHERE session_id = ? AND rowid > ? ORDER BY rowid");
  st.bind(session, after);
  int64_t max = after;
  while (st.step()) {
    max = st.i64(0);
    out.push_back({static_cast<int>(st.i64(1)), st.text(2), st.text(3), static_cast<int>(st.i64(4)), st.f64(5), st.i64(6)});
  }
  if (last) *last = max;
  return out;
}

}  // namespace fusebox

// The SQLite session store: every stage's artifacts of a compile, the fusion decisions, the
// generated sources and compile logs, and profile samples appended while a run goes on. The only
// code in Fusebox that speaks SQL.
//
// A session file holds any number of sessions (one per compile of a model and config). It is in
// WAL mode while written and every write is one transaction, so a process killed mid-run leaves
// every finished stage readable. Opening a file that is not a Fusebox session (empty, not SQLite,
// another program's database, a newer schema, a schema Fusebox did not write) throws SessionError
// naming the file; so does reading a field that does not hold what Fusebox writes there (the
// error names the table, row and column). Several processes may create and write one file at once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/error.h"

namespace fusebox {

class SessionError : public Error {
public:
  using Error::Error;
};

struct SessionInfo {
  int64_t id = 0;
  std::string model;
  std::string config;  // "train target=cpu partitioner=mincut fusion=on", as the recorder writes it
  std::string target;
  std::string created;  // UTC, ISO 8601
  // Schema 4, written in the session browser (empty in older files): what a person calls it.
  std::string name, notes, tags;  // tags: comma-separated
};

// What the session browser lists beside a session's info, from its records.
struct SessionStats {
  int kernels = 0;          // generated kernels, every graph
  int runs = 0;             // profiled runs
  double msPerStep = 0;     // the latest run's mean of per-iteration kernel totals (0: never run)
};

// Bounds on what a person writes about a session (annotateSession throws SessionError past them).
constexpr size_t kMaxSessionNameBytes = 200, kMaxSessionNotesBytes = 20000, kMaxSessionTagsBytes = 1000;

// One stage artifact of one graph ("forward", "backward", "inference", or the stage's own name).
struct StageArtifact {
  std::string stage;   // "trace", "joint", "partition", "decompose", "lower", "schedule", "codegen"
  std::string graph;
  std::string format;  // "json", "text", "dot"
  std::string body;
  double ms = 0;       // how long the stage took (the same for every artifact of the stage)
};

struct StoredDecision {
  std::string graph;
  int first = 0, second = 0;
  std::string kind;
  bool fused = false;
  std::string reason;
  int64_t score = 0;
  bool operator==(const StoredDecision&) const = default;
};

struct StoredKernelOp {
  int node = 0;    // the loop-IR node it belongs to
  std::string op;  // "prims.add"
  bool recomputed = false;  // computed again in the backward (min-cut partitioner; schema 5)
  bool operator==(const StoredKernelOp&) const = default;
};

struct StoredKernel {
  std::string graph;
  int kernelId = 0;
  std::string name;
  std::vector<int> nodes;         // loop-IR node ids, in execution order
  std::vector<int64_t> provenance;  // traced node ids
  int64_t bytes = 0;
  std::vector<StoredKernelOp> ops;  // in execution order (schema 3; none in older files)
  bool operator==(const StoredKernel&) const = default;
};

// A node of a stored graph (schema 3): what the inspector links by and folds by.
struct StoredNode {
  std::string stage;
  std::string graph;
  std::string node;              // its name in the graph's dot text: "n12" (IR graphs), "l3" (loop IR)
  std::vector<int64_t> origins;  // traced node ids it came from (a traced node: itself)
  std::string scope;             // dotted module path, "" at top level
  bool operator==(const StoredNode&) const = default;
};

// Which lines of a generated source one kernel occupies (schema 3).
struct StoredKernelSpan {
  std::string graph;
  std::string kind;  // the source's kind: "cpp", "cuda"
  int kernelId = 0;
  std::string name;
  int firstLine = 0, lastLine = 0;  // 1-based, inclusive; 0 when it has no lines of its own
  std::vector<int64_t> provenance;  // traced node ids
  bool operator==(const StoredKernelSpan&) const = default;
};

// A schedule's summary (schema 3): its loop program's name and the memory plan's peak.
struct StoredSchedule {
  std::string graph;
  std::string program;
  int64_t peakBytes = 0;
  std::vector<int64_t> liveBytes, allocatedBytes;  // per kernel (MemoryPlan; schema 5, none before)
  bool operator==(const StoredSchedule&) const = default;
};

struct StoredSource {
  std::string graph;
  std::string kind;  // "cpp", "cuda", "llvm_ir", "asm", "ptx"
  std::string body;
};

struct CompileLog {
  std::string graph;
  std::string target;
  bool ok = true;
  std::string log;
  double ms = 0;
};

struct ProfileSample {
  int run = 0;  // which run of the session (a session may be run several times)
  std::string graph;
  std::string kernel;
  int iteration = 0;
  double ms = 0;
  int64_t bytes = 0;
  double startMs = -1;  // from the iteration's first kernel start (schema 5; -1: not recorded)
  double launchMs = -1;  // CUDA: when the host issued it, same axis (schema 6; -1: not recorded)
};

// Everything one stage writes, committed together.
struct StageRecord {
  std::vector<StageArtifact> artifacts;
  std::vector<StoredDecision> decisions;
  std::vector<StoredKernel> kernels;
  std::vector<StoredSource> sources;
  std::vector<StoredNode> nodes;
  std::vector<StoredKernelSpan> spans;
  std::vector<StoredSchedule> schedules;
};

class SessionStore {
public:
  // Opens for writing (creating when `create` and the file does not exist) and migrates to the
  // current schema; safe while other processes create or write the same file.
  static SessionStore open(const std::string& path, bool create = true);
  // Opens without ever writing to the file or creating files beside it (reports, comparisons). A
  // `live` reader follows a file that another process is writing (the GUI); see session_open.cpp.
  static SessionStore openReadOnly(const std::string& path, bool live = false);
  SessionStore(SessionStore&&) noexcept;
  SessionStore& operator=(SessionStore&&) noexcept;
  ~SessionStore();

  static int schemaVersion();
  const std::string& path() const { return path_; }
  bool readOnly() const;  // writes throw SessionError; cacheLayout does nothing

  int64_t createSession(const std::string& model, const std::string& config, const std::string& target);
  std::vector<SessionInfo> sessions() const;
  SessionInfo session(int64_t id) const;  // throws SessionError when absent
  std::optional<int64_t> latestSession() const;
  std::map<int64_t, SessionStats> sessionStats() const;  // every session's, by id
  // Schema 4. One transaction each; an unknown id throws SessionError naming the file.
  void annotateSession(int64_t id, const std::string& name, const std::string& notes, const std::string& tags);
  void deleteSession(int64_t id);  // with everything recorded for it (the layout cache is shared and kept)

  // One transaction each.
  void writeStage(int64_t session, const StageRecord& record);
  void writeSources(int64_t session, const std::vector<StoredSource>& sources);
  void writeCompileLog(int64_t session, const CompileLog& log);
  int beginRun(int64_t session);  // the next run number
  void appendProfile(int64_t session, const std::vector<ProfileSample>& samples);

  // Graph layouts by the hash of their dot text (GraphLayout serialized by the report library).
  // What a file's cache holds is untrusted: check it against the graph before use (report/).
  std::optional<std::string> cachedLayout(const std::string& dotHash) const;
  void cacheLayout(const std::string& dotHash, const std::string& layout);

  std::vector<StageArtifact> artifacts(int64_t session) const;
  std::vector<StageArtifact> artifacts(int64_t session, const std::string& stage) const;
  std::optional<StageArtifact> artifact(int64_t session, const std::string& stage, const std::string& graph,
                                        const std::string& format) const;
  std::vector<std::string> stagesDone(int64_t session) const;  // in pipeline order of writing
  std::vector<StoredDecision> decisions(int64_t session) const;
  std::vector<StoredKernel> kernels(int64_t session) const;
  std::vector<StoredSource> sources(int64_t session) const;
  std::vector<CompileLog> compileLogs(int64_t session) const;
  // Schema 3 (empty for an older file opened read-only).
  std::vector<StoredNode> nodes(int64_t session, const std::string& stage) const;
  std::vector<StoredKernelSpan> kernelSpans(int64_t session) const;
  std::vector<StoredSchedule> schedules(int64_t session) const;
  // What stage `stage` of `session` wrote, read back (session_stage_record.cpp): its artifacts and
  // graph nodes; for a schedule stage the decisions, kernels and summaries; for a codegen stage
  // the generated sources (not what compilers made of them) and their kernel spans.
  StageRecord stageRecord(int64_t session, const std::string& stage) const;
  // Samples with rowid > `after` (for readers that poll while a run appends); `last` gets the
  // highest rowid returned.
  std::vector<ProfileSample> profile(int64_t session, int64_t after = 0, int64_t* last = nullptr) const;

  struct Db;  // the SQLite connection (session_store.cpp)

private:
  explicit SessionStore(std::unique_ptr<Db> db, std::string path);
  std::unique_ptr<Db> db_;
  std::string path_;
};

}  // namespace fusebox

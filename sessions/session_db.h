// The SQLite connection behind a SessionStore and the two helpers every query uses: a prepared
// Statement whose column readers validate what they read (a session file may come from anyone),
// and an IMMEDIATE Transaction. Internal to sessions/.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sessions/session_store.h"

namespace fusebox {

struct SessionStore::Db {
  sqlite3* handle = nullptr;
  std::string path;
  bool readOnly = false;
  bool owned = false;  // a Fusebox session (checked and migrated): only then is its journal mode ours to change
  int version = 0;  // the file's schema version (a read-only store does not migrate)
  ~Db();
  [[noreturn]] void fail(const std::string& what) const;
  void exec(const char* sql, const std::string& what);
  int tryExec(const char* sql);  // the SQLite result code, no exception
};

// Limits on what one field of a session may hold.
constexpr int64_t kMaxNameBytes = 4096;             // model, config, stage, graph, kind, kernel names
constexpr int64_t kMaxBodyBytes = 256ll << 20;      // one graph, source, log or layout (SQLITE_LIMIT_LENGTH)
constexpr int64_t kMaxNodeId = (int64_t{1} << 31) - 1;

// A prepared statement with positional binding: Statement(db, table, sql).bind(a, b, ...). Column
// readers check the stored type and range and throw SessionError naming the file, the table, the
// row and the column.
class Statement {
public:
  Statement(SessionStore::Db& db, const char* table, const char* sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  template <class... T>
  Statement& bind(const T&... values) {
    sqlite3_reset(st_);
    int i = 0;
    (bindOne(++i, values), ...);
    return *this;
  }
  void bindNull(int i) { sqlite3_bind_null(st_, i); }  // after bind(): parameter i (1-based) is NULL
  bool step();  // true while a row is available
  void run();

  int64_t i64(int c, const char* column, int64_t lo = INT64_MIN, int64_t hi = INT64_MAX) const;
  int i32(int c, const char* column, int64_t lo = 0, int64_t hi = kMaxNodeId) const { return static_cast<int>(i64(c, column, lo, hi)); }
  bool flag(int c, const char* column) const { return i64(c, column, 0, 1) != 0; }
  double ms(int c, const char* column) const;  // finite, >= 0
  double msOrMissing(int c, const char* column) const;  // ms(), or -1 for NULL
  std::string text(int c, const char* column, int64_t maxBytes = kMaxNameBytes) const;
  template <class T>
  std::vector<T> ids(int c, const char* column) const;  // "3,4,17": non-negative ids
  std::vector<int64_t> byteCounts(int c, const char* column) const;  // "4096,0,8192": sizes in bytes
  // Counts are SQLite's own (count(*), max()): trusted.
  int64_t raw(int c) const { return sqlite3_column_int64(st_, c); }
  [[noreturn]] void bad(const char* column, const std::string& what) const;

private:
  void bindOne(int i, int64_t v) { sqlite3_bind_int64(st_, i, v); }
  void bindOne(int i, int v) { sqlite3_bind_int64(st_, i, v); }
  void bindOne(int i, bool v) { sqlite3_bind_int64(st_, i, v ? 1 : 0); }
  void bindOne(int i, double v) { sqlite3_bind_double(st_, i, v); }
  void bindOne(int i, const std::string& v) { sqlite3_bind_text(st_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT); }
  void bindOne(int i, const char* v) { sqlite3_bind_text(st_, i, v, -1, SQLITE_TRANSIENT); }

  SessionStore::Db& db_;
  const char* table_;
  sqlite3_stmt* st_ = nullptr;
  int64_t row_ = 0;
};

// BEGIN IMMEDIATE ... COMMIT (the write lock taken up front, waiting for other writers up to the
// busy timeout), rolled back when the scope is left by an exception.
class Transaction {
public:
  explicit Transaction(SessionStore::Db& db);
  ~Transaction();
  void commit();

private:
  SessionStore::Db& db_;
  bool done_ = false;
};

}  // namespace fusebox

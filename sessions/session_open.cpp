// Opening a session file: for writing (created and migrated safely while other processes create
// or write the same file) or read-only (never writing to the file, never leaving files behind).
//
// Writers: every open runs its checks and migrations inside one BEGIN IMMEDIATE transaction, so
// two processes creating the same new file serialize on SQLite's write lock and the second finds
// the schema already in place (the version is read again under the lock). WAL mode is switched on
// after the schema exists, the busy timeout is long (compiles of other writers may hold the lock
// between stages), and the last writer to close switches the file back to rollback-journal mode
// (session_db.cpp), so a file at rest is one self-contained file without -wal/-shm companions.
//
// Readers (report, compare, the GUI's reader): the file is checked on disk first (a regular,
// non-empty SQLite file with Fusebox's application id), so an empty or foreign file is refused
// untouched. Then it is opened with SQLITE_OPEN_READONLY:
//  - rollback-journal mode (a file at rest): `mode=ro`, ordinary shared locks on the file, no
//    other file created;
//  - WAL mode with both -wal and -shm present (a writer is live, or one was killed): `mode=ro`
//    using them (SQLite reads through a -shm it cannot write, too);
//  - WAL mode with neither (the last writer could not switch back): `immutable=1`, because a
//    read-only open of a WAL file would otherwise create -wal/-shm owned by the reader, which the
//    file's owner then cannot write;
//  - WAL mode with a non-empty -wal but no -shm: refused (reading it would create the -shm).
// A "live" reader (the GUI, polling its own file while runs append) never uses `immutable`.
//
// Every file, read or written, must hold exactly the tables and indexes that Fusebox's migrations
// create (compared with the schema built in memory), so a crafted file cannot hide views,
// triggers or other columns behind the expected names.
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "sessions/session_db.h"
#include "sessions/session_file.h"
#include "sessions/session_schema.h"

namespace fusebox {

namespace {

constexpr int kWriterBusyMs = 60000;  // other writers hold the lock for one stage at a time
constexpr int kReaderBusyMs = 10000;

int64_t pragmaInt(SessionStore::Db& db, const char* sql) {
  Statement st(db, "sqlite_master", sql);
  return st.step() ? st.raw(0) : 0;
}

// Hardening for files from elsewhere (https://www.sqlite.org/security.html).
void configure(SessionStore::Db& db, int busyMs) {
  sqlite3_busy_timeout(db.handle, busyMs);
  sqlite3_extended_result_codes(db.handle, 1);
  sqlite3_limit(db.handle, SQLITE_LIMIT_LENGTH, static_cast<int>(kMaxBodyBytes));
  sqlite3_limit(db.handle, SQLITE_LIMIT_SQL_LENGTH, 1 << 20);
  sqlite3_limit(db.handle, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_db_config(db.handle, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db.handle, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(db.handle, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  sqlite3_db_config(db.handle, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
  db.tryExec("PRAGMA cell_size_check = ON; PRAGMA mmap_size = 0");
}

// Retries `sql` while another connection holds a lock SQLite does not wait for by itself (the
// journal mode change takes the file exclusively).
void execRetrying(SessionStore::Db& db, const char* sql, const std::string& what) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWriterBusyMs);
  while (true) {
    int rc = db.tryExec(sql);
    if (rc == SQLITE_OK) return;
    if ((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) break;
    if (std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  db.exec(sql, what);  // once more, for the error message
}

using SchemaRows = std::vector<std::string>;

// "type name tbl_name sql" of every schema object, in name order.
SchemaRows schemaOf(SessionStore::Db& db) {
  SchemaRows rows;
  Statement st(db, "sqlite_master", "SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master ORDER BY name");
  while (st.step())
    rows.push_back(st.text(0, "type") + "\x1f" + st.text(1, "name") + "\x1f" + st.text(2, "tbl_name") + "\x1f" +
                   st.text(3, "sql", 1 << 20));
  return rows;
}

// The schema Fusebox's migrations 1..version create, built in memory.
SchemaRows expectedSchema(int version) {
  SessionStore::Db mem;
  mem.path = ":memory:";
  mem.readOnly = true;  // nothing to switch back on close
  if (sqlite3_open_v2(":memory:", &mem.handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK)
    mem.fail("cannot build the expected schema");
  for (int v = 0; v < version; ++v) mem.exec(sessionMigrations()[static_cast<size_t>(v)], "the built-in schema");
  return schemaOf(mem);
}

void verifySchema(SessionStore::Db& db) {
  SchemaRows have = schemaOf(db), want = expectedSchema(db.version);
  if (have == want) return;
  for (const std::string& row : have)
    if (std::find(want.begin(), want.end(), row) == want.end()) {
      std::string name = row.substr(row.find('\x1f') + 1);
      name = name.substr(0, name.find('\x1f'));
      throw SessionError(db.path + ": not a session file as Fusebox writes it: unexpected or altered schema object '" +
                         name.substr(0, 80) + "'");
    }
  throw SessionError(db.path + ": not a session file as Fusebox writes it: tables are missing for schema version " +
                     std::to_string(db.version));
}

void checkIdentity(SessionStore::Db& db, int64_t app, int64_t version, bool empty) {
  if (app != kSessionApplicationId && !(app == 0 && version == 0 && empty))
    throw SessionError(db.path + ": not a Fusebox session file (a SQLite database of another program)");
  int64_t latest = static_cast<int64_t>(sessionMigrations().size());
  if (version > latest)
    throw SessionError(db.path + ": session schema version " + std::to_string(version) + " is newer than this Fusebox (" +
                       std::to_string(latest) + "); update Fusebox to open it");
  if (version < 0) throw SessionError(db.path + ": not a Fusebox session file (schema version " + std::to_string(version) + ")");
}

// Under the write lock: checks what the file is, then applies the missing migrations. A second
// process creating the same file waits here and then finds the schema in place.
void migrate(SessionStore::Db& db) {
  Transaction t(db);
  int64_t app = pragmaInt(db, "PRAGMA application_id");
  int64_t version = pragmaInt(db, "PRAGMA user_version");
  bool empty = pragmaInt(db, "SELECT count(*) FROM sqlite_master") == 0;
  checkIdentity(db, app, version, empty);
  const auto& migrations = sessionMigrations();
  for (size_t v = static_cast<size_t>(version); v < migrations.size(); ++v)
    db.exec(migrations[v], "migration to schema version " + std::to_string(v + 1) + " failed");
  if (static_cast<size_t>(version) < migrations.size()) {
    std::string set = "PRAGMA user_version = " + std::to_string(migrations.size()) +
                      "; PRAGMA application_id = " + std::to_string(kSessionApplicationId);
    db.exec(set.c_str(), "cannot record the schema version");
  }
  t.commit();
  db.version = static_cast<int>(migrations.size());
  db.owned = true;
}

void quickCheck(SessionStore::Db& db) {
  Statement check(db, "sqlite_master", "PRAGMA quick_check");
  if (check.step()) {
    std::string result = check.text(0, "quick_check", 1 << 16);
    if (result != "ok") throw SessionError(db.path + ": the session file is damaged: " + result.substr(0, 200));
  }
}

// The on-disk checks every open makes before SQLite reads the file.
void checkOnDisk(const std::string& path, const SessionFileState& f, bool reading) {
  if (!f.exists) {
    if (reading) throw SessionError(path + ": cannot open the session file: no such file");
    return;
  }
  if (!f.regular) throw SessionError(path + ": not a session file (not a regular file)");
  if (f.size == 0) {
    if (reading) throw SessionError(path + ": not a Fusebox session file (the file is empty); it was left unchanged");
    return;  // a writer may initialize an empty file (another writer may just have created it)
  }
  if (!f.sqlite) throw SessionError(path + ": not a readable session file: file is not a database");
  if (f.applicationId != static_cast<uint32_t>(kSessionApplicationId) && (reading || f.applicationId != 0))
    throw SessionError(path + ": not a Fusebox session file (a SQLite database of another program)");
}

}  // namespace

SessionStore SessionStore::open(const std::string& path, bool create) {
  SessionFileState f = inspectSessionFile(path);
  checkOnDisk(path, f, false);
  if (!f.exists && !create) throw SessionError(path + ": cannot open the session file: no such file");
  auto db = std::make_unique<Db>();
  db->path = path;
  int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path.c_str(), &db->handle, flags, nullptr) != SQLITE_OK)
    db->fail(create ? "cannot create or open the session file" : "cannot open the session file");
  configure(*db, kWriterBusyMs);
  // The first read tells a non-database file apart ("file is not a database").
  db->exec("SELECT count(*) FROM sqlite_master", "not a readable session file");
  migrate(*db);
  execRetrying(*db, "PRAGMA journal_mode = WAL", "cannot switch the session file to WAL mode");
  db->exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;", "cannot configure the session file");
  verifySchema(*db);
  quickCheck(*db);
  return SessionStore(std::move(db), path);
}

SessionStore SessionStore::openReadOnly(const std::string& path, bool live) {
  SessionFileState f = inspectSessionFile(path);
  checkOnDisk(path, f, true);
  std::string query = "mode=ro";
  if (f.wal && !live) {
    if (f.walSize > 0 && !f.shmFile)
      throw SessionError(path + ": the session file has an unfinished write-ahead log (" + path +
                         "-wal) without its -shm index; open it once for writing (fusebox compile/run) to recover it");
    if (!(f.walFile && f.shmFile)) query = "immutable=1";
  }
  auto db = std::make_unique<Db>();
  db->path = path;
  db->readOnly = true;
  if (sqlite3_open_v2(sqliteUri(path, query).c_str(), &db->handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) != SQLITE_OK)
    db->fail("cannot open the session file");
  configure(*db, kReaderBusyMs);
  db->exec("SELECT count(*) FROM sqlite_master", "not a readable session file");
  int64_t app = pragmaInt(*db, "PRAGMA application_id");
  int64_t version = pragmaInt(*db, "PRAGMA user_version");
  checkIdentity(*db, app, version, false);
  if (version < 1) throw SessionError(path + ": not a Fusebox session file (no schema)");
  db->version = static_cast<int>(version);
  verifySchema(*db);
  quickCheck(*db);
  return SessionStore(std::move(db), path);
}

}  // namespace fusebox

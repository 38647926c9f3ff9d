// What is on disk before SQLite opens a session file: whether it exists, is a regular file, looks
// like a SQLite database of Fusebox (the header's magic and application id), is in WAL mode, and
// which -wal/-shm companions lie next to it. No SQL here: these checks refuse a file that is not a
// session before any SQLite connection opens it (the header is read read-only through SQLite's VFS,
// which keeps this process's locks on the file intact), so it is left byte-identical.
#pragma once

#include <cstdint>
#include <string>

namespace fusebox {

struct SessionFileState {
  bool exists = false;
  bool regular = false;
  int64_t size = 0;
  bool sqlite = false;         // the 16-byte "SQLite format 3" magic
  bool wal = false;            // the header's read/write versions say WAL (2)
  uint32_t applicationId = 0;  // header offset 68, big-endian
  bool walFile = false, shmFile = false;
  int64_t walSize = 0;
};

SessionFileState inspectSessionFile(const std::string& path);

// "file:" URI for sqlite3_open_v2 with SQLITE_OPEN_URI: the path percent-encoded, then `query`.
std::string sqliteUri(const std::string& path, const std::string& query);

}  // namespace fusebox

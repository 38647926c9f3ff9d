#include "sessions/session_file.h"

#include <sys/stat.h>

#include <cctype>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include <sqlite3.h>

namespace fusebox {

namespace {

bool statFile(const std::string& path, struct stat& st) { return ::stat(path.c_str(), &st) == 0; }

// Reads the first bytes of the file through SQLite's own VFS, never with open()/close() of our
// own: closing any descriptor of a file drops every POSIX lock this process holds on it, so the
// GUI's open connections silently lost theirs each time it opened the file again (another process
// then switched the journal mode or deleted the WAL under them). SQLite's unix VFS keeps such a
// descriptor open until the process's locks on the file are gone.
bool readHeader(const std::string& path, unsigned char* out, int n) {
  sqlite3_vfs* vfs = sqlite3_vfs_find(nullptr);
  if (!vfs) return false;
  std::vector<char> storage(static_cast<size_t>(vfs->szOsFile) + alignof(std::max_align_t));
  void* raw = storage.data();
  size_t space = storage.size();
  auto* file = static_cast<sqlite3_file*>(std::align(alignof(std::max_align_t), vfs->szOsFile, raw, space));
  std::memset(file, 0, vfs->szOsFile);
  int flags = 0;
  if (vfs->xOpen(vfs, path.c_str(), file, SQLITE_OPEN_READONLY | SQLITE_OPEN_MAIN_DB, &flags) != SQLITE_OK) {
    if (file->pMethods) file->pMethods->xClose(file);
    return false;
  }
  bool ok = file->pMethods->xRead(file, out, n, 0) == SQLITE_OK;
  file->pMethods->xClose(file);
  return ok;
}

}  // namespace

SessionFileState inspectSessionFile(const std::string& path) {
  SessionFileState s;
  struct stat st {};
  if (!statFile(path, st)) return s;
  s.exists = true;
  s.regular = S_ISREG(st.st_mode);
  s.size = st.st_size;
  if (s.regular && s.size >= 100) {
    unsigned char h[100] = {};
    if (readHeader(path, h, sizeof h)) {
      s.sqlite = std::memcmp(h, "SQLite format 3", 16) == 0;
      s.wal = h[18] == 2 || h[19] == 2;
      s.applicationId = uint32_t{h[68]} << 24 | uint32_t{h[69]} << 16 | uint32_t{h[70]} << 8 | uint32_t{h[71]};
    }
  }
  struct stat w {};
  s.walFile = statFile(path + "-wal", w);
  s.walSize = s.walFile ? w.st_size : 0;
  s.shmFile = statFile(path + "-shm", w);
  return s;
}

std::string sqliteUri(const std::string& path, const std::string& query) {
  std::string out = "file://";  // then an absolute path: no authority, whatever the path starts with
  std::error_code ec;
  std::string abs = std::filesystem::absolute(path, ec).string();
  for (unsigned char c : ec ? path : abs) {
    if (std::isalnum(c) || std::strchr("/._-~", c)) {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out + "?" + query;
}

}  // namespace fusebox

#include "sessions/session_file.h"

#include <sys/stat.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace fusebox {

namespace {

bool statFile(const std::string& path, struct stat& st) { return ::stat(path.c_str(), &st) == 0; }

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
    std::ifstream f(path, std::ios::binary);
    if (f.read(reinterpret_cast<char*>(h), sizeof h)) {
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

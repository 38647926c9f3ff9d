#include "core/frontend/model_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/ir/error.h"
#include "core/ir/memory_budget.h"

namespace fusebox {

namespace {

const char* fileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

void requireRegular(const std::string& path, const struct stat& st) {
  if (!S_ISREG(st.st_mode))
    throw Error("model file '" + path + "' is " + fileKind(st.st_mode) + ", not a regular file; a model must be a .fbx or .onnx file");
}

// Closes the descriptor however the read ends.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

bool modelPathExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string readModelFile(const std::string& path, int64_t maxBytes) {
  // stat before open: opening a FIFO for reading blocks until a writer comes.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    throw Error("cannot open model file '" + path + "': " + std::strerror(errno));
  requireRegular(path, st);
  // O_NONBLOCK: should the path have been swapped for a FIFO since, the open still returns.
  Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0) throw Error("cannot open model file '" + path + "': " + std::strerror(errno));
  if (::fstat(f.fd, &st) != 0) throw Error("cannot read model file '" + path + "': " + std::strerror(errno));
  requireRegular(path, st);  // what was opened, not what the path named a moment before
  auto tooLarge = [&](const std::string& size) {
    return LimitError("model file '" + path + "' is " + size + ", over the limit of " + formatBytes(maxBytes) + " for a model file");
  };
  if (st.st_size > maxBytes) throw tooLarge(std::to_string(st.st_size) + " bytes");
  std::string out;
  out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error("cannot read model file '" + path + "': " + std::strerror(errno));
    }
    if (n == 0) break;
    if (static_cast<int64_t>(out.size()) + n > maxBytes) throw tooLarge("larger than it was when opened");  // grew while read
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace fusebox

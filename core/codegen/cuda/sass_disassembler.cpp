#include "core/codegen/cuda/sass_disassembler.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

extern char** environ;

namespace fusebox {

namespace {

namespace fs = std::filesystem;

constexpr int kToolSeconds = 120;                      // ptxas on a large module takes seconds, not minutes
constexpr std::uintmax_t kMaxListingBytes = 64 << 20;  // a listing past this is cut

std::string findTool(const std::string& name) {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty()) dirs.push_back(d);
  }
  if (const char* home = std::getenv("CUDA_HOME")) dirs.push_back(std::string(home) + "/bin");
  dirs.push_back("/usr/local/cuda/bin");
  for (const std::string& d : dirs) {
    std::string p = d + "/" + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

// Runs argv with stdout and stderr into `out`; the exit status, or -1 when it could not start or
// ran past the time limit (then it is killed).
int runTool(const std::vector<std::string>& argv, const fs::path& out) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kToolSeconds);
  int status = 0;
  while (true) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return -1;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string readBounded(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::string s(static_cast<size_t>(std::min<std::uintmax_t>(fs::file_size(p), kMaxListingBytes)), '\0');
  f.read(s.data(), static_cast<std::streamsize>(s.size()));
  s.resize(static_cast<size_t>(f.gcount()));
  return s;
}

std::string firstLine(const std::string& s) {
  std::string l = s.substr(0, s.find('\n'));
  return l.size() > 200 ? l.substr(0, 200) + "…" : l;
}

}  // namespace

SassListing disassembleSass(const std::string& ptx, int computeCapability) {
  std::string ptxas = findTool("ptxas"), nvdisasm = findTool("nvdisasm"), cuobjdump = findTool("cuobjdump");
  if (ptxas.empty() || (nvdisasm.empty() && cuobjdump.empty()))
    return {false, "// SASS needs ptxas and nvdisasm (or cuobjdump) from NVIDIA's CUDA toolkit (apt-get install nvidia-cuda-toolkit, "
                   "or NVIDIA's cuda-toolkit); not found on the PATH, in $CUDA_HOME/bin or in /usr/local/cuda/bin\n"};
  char tmpl[] = "/tmp/fusebox-sass-XXXXXX";
  if (!::mkdtemp(tmpl)) return {false, "// SASS: cannot make a temporary folder\n"};
  fs::path dir(tmpl);
  SassListing out;
  {
    // NVRTC's PTX ends in the C string's NUL, which ptxas reads as a truncated file.
    std::ofstream(dir / "module.ptx", std::ios::binary) << ptx.substr(0, ptx.find('\0'));
    std::string arch = "sm_" + std::to_string(computeCapability);
    fs::path cubin = dir / "module.cubin", log = dir / "tool.log";
    if (runTool({ptxas, "-arch=" + arch, "-lineinfo", "-o", cubin.string(), (dir / "module.ptx").string()}, log) != 0) {
      out.text = "// SASS: ptxas -arch=" + arch + " failed: " + firstLine(readBounded(log)) + "\n";
    } else {
      std::vector<std::string> argv = nvdisasm.empty() ? std::vector<std::string>{cuobjdump, "-sass", cubin.string()}
                                                       : std::vector<std::string>{nvdisasm, "-c", "-gi", cubin.string()};
      fs::path listing = dir / "module.sass";
      if (runTool(argv, listing) != 0) {
        out.text = "// SASS: " + fs::path(argv[0]).filename().string() + " failed: " + firstLine(readBounded(listing)) + "\n";
      } else {
        out.ok = true;
        out.text = "// SASS for " + arch + " (ptxas, then " + fs::path(argv[0]).filename().string() + ")\n" + readBounded(listing);
      }
    }
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return out;
}

}  // namespace fusebox

// Checks in a child process: a miscompiled kernel may crash or never finish, and the fuzzer
// must report that as an outcome and go on.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "core/codegen/cuda/nvrtc_compiler.h"
#include "core/codegen/cpu/jit_compiler.h"
#include "core/fuzz/differential_check.h"
#include "core/runtime/cuda_executable.h"

namespace fusebox::fuzz {

namespace {

void writeAll(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// kind, stage length, stage, message: the child's outcome over a pipe.
std::string encode(const FuzzOutcome& o) {
  return std::to_string(static_cast<int>(o.kind)) + "\n" + std::to_string(o.stage.size()) + "\n" + o.stage + o.message;
}

bool decode(const std::string& s, FuzzOutcome& o) {
  size_t a = s.find('\n');
  if (a == std::string::npos) return false;
  size_t b = s.find('\n', a + 1);
  if (b == std::string::npos) return false;
  size_t len = std::stoul(s.substr(a + 1, b - a - 1));
  if (b + 1 + len > s.size()) return false;
  o.kind = static_cast<OutcomeKind>(std::stoi(s.substr(0, a)));
  o.stage = s.substr(b + 1, len);
  o.message = s.substr(b + 1 + len);
  return true;
}

// Runs `work` in a child; its result string, or a crash outcome.
template <class Work>
FuzzOutcome inChild(Work work, double timeoutSeconds) {
  int fds[2];
  if (::pipe(fds) != 0) return {OutcomeKind::Crash, std::string("pipe failed: ") + std::strerror(errno), ""};
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]), ::close(fds[1]);
    return {OutcomeKind::Crash, std::string("fork failed: ") + std::strerror(errno), ""};
  }
  if (pid == 0) {
    ::close(fds[0]);
    writeAll(fds[1], encode(work()));
    ::_exit(0);  // no destructors or atexit handlers of the parent's state
  }
  ::close(fds[1]);
  std::string data;
  bool timedOut = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSeconds);
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      timedOut = true;
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    int r = ::poll(&pfd, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timedOut) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timedOut) return {OutcomeKind::Crash, "timed out after " + std::to_string(static_cast<int>(timeoutSeconds)) + " s", "run"};
  if (WIFSIGNALED(status))
    return {OutcomeKind::Crash, std::string("killed by signal ") + ::strsignal(WTERMSIG(status)), ""};
  FuzzOutcome o;
  if (!decode(data, o)) return {OutcomeKind::Crash, "the check process exited with status " + std::to_string(WEXITSTATUS(status)), ""};
  return o;
}

}  // namespace

FuzzOutcome checkProgramIsolated(const std::string& program, const CheckConfig& config, double timeoutSeconds, uint64_t seed) {
  return inChild([&] { return checkProgram(program, config, seed); }, timeoutSeconds);
}

bool targetAvailable(FuzzTarget t, std::string* why) {
  if (t == FuzzTarget::Cpu) {
    if (!cpuJitAvailable() && why) *why = "this fusebox was built without the CPU backend (LLVM)";
    return cpuJitAvailable();
  }
  if (!nvrtcAvailable()) {
    if (why) *why = "NVRTC was not found (no CUDA toolkit on this machine)";
    return false;
  }
  if (t == FuzzTarget::Ptx) return true;
  // Asked in a child: a process that has initialized the driver cannot use it after fork.
  FuzzOutcome o = inChild(
      [] {
        std::string reason;
        return cudaDeviceAvailable(&reason) ? FuzzOutcome{} : FuzzOutcome{OutcomeKind::Exception, reason, ""};
      },
      60);
  if (o.failed() && why) *why = o.message;
  return !o.failed();
}

}  // namespace fusebox::fuzz

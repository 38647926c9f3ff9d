#include "app/terminal_progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace fusebox::cli {

TerminalProgress::TerminalProgress() {
  const char* term = std::getenv("TERM");
  enabled_ = ::isatty(STDERR_FILENO) && !(term && std::strcmp(term, "dumb") == 0);
}

void TerminalProgress::show(const std::string& line) {
  if (!enabled_) return;
  std::fprintf(stderr, "\r%s\x1b[K", line.c_str());
  std::fflush(stderr);
  shown_ = true;
}

void TerminalProgress::clear() {
  if (!shown_) return;
  std::fprintf(stderr, "\r\x1b[K");
  std::fflush(stderr);
  shown_ = false;
}

void TerminalProgress::watch(Pipeline& p) {
  if (!enabled_) return;
  p.setStageObserver([this](Stage s) {
    show("[" + std::to_string(static_cast<int>(s) + 1) + "/" + std::to_string(kNumStages) + "] " + stageName(s) + "…");
  });
}

RunHooks TerminalProgress::wrap(RunHooks hooks, int iters) {
  if (!enabled_) return hooks;
  show("compiling the generated code…");
  auto compiled = hooks.compiled;
  hooks.compiled = [this, compiled](const std::string& graph, const std::string& kind, const std::string& text) {
    show("compiled the " + graph + " code…");
    if (compiled) compiled(graph, kind, text);
  };
  auto iteration = hooks.iteration;
  hooks.iteration = [this, iteration, iters](int i, const std::vector<KernelRow>& kernels) {
    if ((i + 1) % std::max(1, iters / 100) == 0 || i + 1 == iters)  // at most ~100 redraws
      show("iteration " + std::to_string(i + 1) + "/" + std::to_string(iters));
    if (iteration) iteration(i, kernels);
  };
  return hooks;
}

}  // namespace fusebox::cli

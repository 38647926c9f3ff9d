// One line of progress on stderr ("[3/7] decompose", "iteration 40/100"), rewritten in place, only
// when stderr is a terminal: pipes, logs and the GUI's child runs stay clean.
#pragma once

#include <string>

#include "core/pipeline/pipeline.h"
#include "core/runtime/model_runner.h"

namespace fusebox::cli {

class TerminalProgress {
public:
  TerminalProgress();
  ~TerminalProgress() { clear(); }
  TerminalProgress(const TerminalProgress&) = delete;
  TerminalProgress& operator=(const TerminalProgress&) = delete;

  bool enabled() const { return enabled_; }
  void show(const std::string& line);
  void clear();
  // Reports each stage of `p` as it starts.
  void watch(Pipeline& p);
  // `hooks` plus progress: each compiled module and each timed iteration of `iters`.
  RunHooks wrap(RunHooks hooks, int iters);

private:
  bool enabled_ = false;
  bool shown_ = false;
};

}  // namespace fusebox::cli

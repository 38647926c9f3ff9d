// The headless subcommands of the `fusebox` binary. Each returns the process exit code:
// 0 success, 1 the model or pipeline failed (message on stderr), 2 bad usage.
#pragma once

#include <string>
#include <vector>

#include "core/autograd/partition.h"
#include "core/trace/trace.h"

namespace fusebox::cli {

int modelsCommand(const std::vector<std::string>& args);
int dumpCommand(const std::vector<std::string>& args);
int runCommand(const std::vector<std::string>& args);
int opsCommand(const std::vector<std::string>& args);
int compileCommand(const std::vector<std::string>& args);
int reportCommand(const std::vector<std::string>& args);
int conformanceCommand(const std::vector<std::string>& args);
int fuzzCommand(const std::vector<std::string>& args);

std::string usage();
extern const char* const kGuiHelp;

class Args;
// --dim NAME=SIZE (repeated) and --symbolic.
TraceOptions traceOptions(const Args& a);
// Whether a subcommand's arguments ask for its help (--help or -h anywhere).
bool wantsHelp(const std::vector<std::string>& args);
// --max-memory SIZE: sets the process's memory budget (default: half of physical RAM).
void applyMemoryBudget(const Args& a);
// --partitioner mincut|default (mincut when absent).
Partitioner partitionerArg(const Args& a);
// --target: a backend of the table (core/backend), or "interp" where `interpToo`.
std::string targetArg(const Args& a, const std::string& fallback, bool interpToo);

}  // namespace fusebox::cli

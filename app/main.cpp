// The `fusebox` executable: headless CLI subcommands (and, with no arguments, the GUI once it
// is built in).
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "app/cli_args.h"
#include "app/commands.h"
#include "core/ir/error.h"
#include "core/runtime/blas_kernels.h"

#ifdef FUSEBOX_HAS_GUI
#include "app/gui/gui_main.h"
#endif

#ifndef FUSEBOX_VERSION
#define FUSEBOX_VERSION "0.0.0"
#endif

int main(int argc, char** argv) {
  fusebox::restartForBlasKernels(argv);
  using namespace fusebox::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
#ifdef FUSEBOX_HAS_GUI
  if (args.empty()) return fusebox::runGui(argc, argv, {});
  if (args[0] == "gui" && !wantsHelp({args.begin() + 1, args.end()})) {
    try {
      return fusebox::runGui(argc, argv, fusebox::parseGuiOptions({args.begin() + 1, args.end()}));
    } catch (const UsageError& e) {
      std::cerr << "fusebox: " << e.what() << "\n\n" << kGuiHelp;
      return 2;
    }
  }
#endif
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << usage();
    return 0;
  }
  if (args[0] == "--has-gui") {  // for scripts/run: exit status says whether the GUI is built in
#ifdef FUSEBOX_HAS_GUI
    return 0;
#else
    return 1;
#endif
  }
  if (args[0] == "--version") {
    std::cout << "fusebox " << FUSEBOX_VERSION << "\n";
    return 0;
  }
  if (args[0] == "gui") {
    if (wantsHelp({args.begin() + 1, args.end()})) return std::cout << kGuiHelp, 0;
    std::cerr << "fusebox: this build has no GUI (Qt 6 was not found at configure time)\n";
    return 1;
  }
  std::string command = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  try {
    if (command == "models") return modelsCommand(rest);
    if (command == "ops") return opsCommand(rest);
    if (command == "dump") return dumpCommand(rest);
    if (command == "run") return runCommand(rest);
    if (command == "compile") return compileCommand(rest);
    if (command == "report") return reportCommand(rest);
    if (command == "conformance") return conformanceCommand(rest);
    if (command == "fuzz") return fuzzCommand(rest);
    throw UsageError("unknown command '" + command + "'");
  } catch (const UsageError& e) {
    std::cerr << "fusebox: " << e.what() << "\n\n" << usage();
    return 2;
  } catch (const fusebox::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {  // an allocation no budget check foresaw: say what was being done
    std::string what = command;
    for (const std::string& r : rest) what += " " + r;
    std::cerr << "fusebox: out of memory while running '" << what << "': an allocation failed that the memory budget "
              << "(--max-memory, default half of physical RAM) does not cover; try smaller sizes (--dim) or a smaller model\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "fusebox: internal error: " << e.what() << "\n";
    return 1;
  }
}

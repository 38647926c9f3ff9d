// The GUI entry point of the `fusebox` binary (no arguments, or `fusebox gui ...`, app/gui_options.h).
#pragma once

#include "app/gui_options.h"

namespace fusebox {

// Returns the exit code; refuses cleanly (exit 1) when there is no display to open a window on.
int runGui(int argc, char** argv, const GuiOptions& options);

}  // namespace fusebox

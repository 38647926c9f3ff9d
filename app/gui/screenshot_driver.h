// `fusebox gui MODEL --run-all --screenshot out.png [--focus PANE] [--expand SCOPE]`: drives the
// real window (as a user would: Run all, focus, open scopes), waits until every stage and every
// layout is drawn, writes the window to a PNG and quits. For docs and tests; under
// QT_QPA_PLATFORM=offscreen it needs no display.
#pragma once

#include "app/gui_options.h"

namespace fusebox {

class MainWindow;

// Starts the sequence on the running event loop; it ends the loop with 0 when the PNG is written,
// 1 (the reason on stderr) when a stage fails, a scope is unknown or 10 minutes pass.
void driveScreenshot(MainWindow& window, const GuiOptions& options);

}  // namespace fusebox

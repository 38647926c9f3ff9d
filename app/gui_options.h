// What `fusebox gui` was asked to open, parsed without Qt so a mistake is reported before a
// window exists:
//   fusebox gui [MODEL] [--session FILE [--id N]]
//   fusebox gui FILE.fbs          (its latest stored session)
//   fusebox gui MODEL --run-all --screenshot out.png [--focus PANE] [--expand SCOPE] [--size WxH]
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fusebox {

struct GuiOptions {
  std::string model;        // a built-in name or a .fbx/.onnx path; empty: the demo model
  std::string sessionFile;  // where sessions are read and recorded; empty: the per-user file
  bool openStored = false;  // show stored session `sessionId` of sessionFile (0: its latest)
  bool browse = false;      // and open the session browser on sessionFile (gui FILE.fbs)
  int64_t sessionId = 0;
  bool runAll = false;        // run every stage at start
  std::string screenshot;     // write the window to this PNG once everything is drawn, then exit
  int focusPane = -1;         // give this graph pane (index into graphPanes()) the window
  std::vector<std::string> expand;  // scopes to open in every pane that has them
  int width = 1600, height = 1000;  // the window's size for a screenshot
};

// Throws cli::UsageError naming the argument: an unknown model, a missing file, --id without a
// session file, an option it does not know.
GuiOptions parseGuiOptions(const std::vector<std::string>& args);

}  // namespace fusebox

// What `fusebox gui` was asked to open, parsed without Qt so a mistake is reported before a
// window exists:
//   fusebox gui [MODEL] [--session FILE [--id N]]
//   fusebox gui FILE.fbs          (its latest stored session)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fusebox {

struct GuiOptions {
  std::string model;        // a built-in name or a .fbx/.onnx path; empty: the demo model
  std::string sessionFile;  // where sessions are read and recorded; empty: the per-user file
  bool openStored = false;  // show stored session `sessionId` of sessionFile (0: its latest)
  int64_t sessionId = 0;
};

// Throws cli::UsageError naming the argument: an unknown model, a missing file, --id without a
// session file, an option it does not know.
GuiOptions parseGuiOptions(const std::vector<std::string>& args);

}  // namespace fusebox

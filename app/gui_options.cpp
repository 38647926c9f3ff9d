#include "app/gui_options.h"

#include <filesystem>

#include "app/cli_args.h"
#include "core/frontend/model_loader.h"

namespace fusebox {

namespace {

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

GuiOptions parseGuiOptions(const std::vector<std::string>& args) {
  cli::Args a(args, {"--session", "--id"}, {});
  if (a.positional().size() > 1) throw cli::UsageError("gui takes one MODEL or session file, got " + std::to_string(a.positional().size()));
  GuiOptions o;
  o.sessionFile = a.valueOr("--session", "");
  if (!a.positional().empty()) {
    const std::string& what = a.positional()[0];
    if (endsWith(what, ".fbs")) {  // a session file: show its latest session
      if (!o.sessionFile.empty()) throw cli::UsageError("gui: give the session file once (" + what + " or --session)");
      o.sessionFile = what;
      o.openStored = true;
    } else if (!findBuiltinModel(what) && !std::filesystem::is_regular_file(what)) {
      throw cli::UsageError("gui: no model '" + what + "' (a built-in model, see `fusebox models`, or a .fbx or .onnx file)");
    } else {
      o.model = what;
    }
  }
  if (a.value("--id")) {
    if (o.sessionFile.empty()) throw cli::UsageError("gui: --id needs the session file it is in (--session FILE)");
    if (!o.model.empty()) throw cli::UsageError("gui: --id shows a stored session; it takes no MODEL");
    o.sessionId = a.intValue("--id", 0, 1, 2147483647);
    o.openStored = true;
  }
  if (o.openStored && !std::filesystem::is_regular_file(o.sessionFile))
    throw cli::UsageError("gui: no session file '" + o.sessionFile + "'");
  return o;
}

}  // namespace fusebox

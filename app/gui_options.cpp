#include "app/gui_options.h"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "app/cli_args.h"
#include "core/frontend/model_loader.h"
#include "core/pipeline/stage_table.h"

namespace fusebox {

namespace {

std::string lowerCase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

GuiOptions parseGuiOptions(const std::vector<std::string>& args) {
  cli::Args a(args, {"--session", "--id", "--screenshot", "--focus", "--expand", "--size"}, {"--run-all"});
  if (a.positional().size() > 1) throw cli::UsageError("gui takes one MODEL or session file, got " + std::to_string(a.positional().size()));
  GuiOptions o;
  o.sessionFile = a.valueOr("--session", "");
  if (!a.positional().empty()) {
    const std::string& what = a.positional()[0];
    if (endsWith(what, ".fbs")) {  // a session file: show its latest session
      if (!o.sessionFile.empty()) throw cli::UsageError("gui: give the session file once (" + what + " or --session)");
      o.sessionFile = what;
      o.openStored = true;
      o.browse = true;
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
  o.runAll = a.flag("--run-all");
  o.screenshot = a.valueOr("--screenshot", "");
  if (!o.screenshot.empty() && !endsWith(o.screenshot, ".png")) throw cli::UsageError("gui: --screenshot writes a .png file, got '" + o.screenshot + "'");
  if (std::optional<std::string> focus = a.value("--focus")) {
    std::string want = lowerCase(*focus);
    for (size_t i = 0; i < graphPanes().size(); ++i)
      if (!want.empty() && lowerCase(graphPanes()[i].title).rfind(want, 0) == 0) o.focusPane = static_cast<int>(i);
    if (o.focusPane < 0) throw cli::UsageError("gui: --focus takes a pane: traced, joint, prims or fused (got '" + *focus + "')");
  }
  if (std::optional<std::string> scopes = a.value("--expand"))
    for (size_t start = 0; start <= scopes->size();) {  // comma-separated
      size_t comma = std::min(scopes->find(',', start), scopes->size());
      if (comma > start) o.expand.push_back(scopes->substr(start, comma - start));
      start = comma + 1;
    }
  if (std::optional<std::string> size = a.value("--size")) {
    int w = 0, h = 0;
    char x = 0, extra = 0;
    if (std::sscanf(size->c_str(), "%d%c%d%c", &w, &x, &h, &extra) != 3 || x != 'x' || w < 640 || h < 480 || w > 7680 || h > 4320)
      throw cli::UsageError("gui: --size takes WIDTHxHEIGHT between 640x480 and 7680x4320, got '" + *size + "'");
    o.width = w;
    o.height = h;
  }
  bool shotOnly = o.focusPane >= 0 || !o.expand.empty() || a.value("--size");
  if (shotOnly && o.screenshot.empty()) throw cli::UsageError("gui: --focus, --expand and --size shape a --screenshot; give one");
  if (o.openStored && !std::filesystem::is_regular_file(o.sessionFile))
    throw cli::UsageError("gui: no session file '" + o.sessionFile + "'");
  return o;
}

}  // namespace fusebox

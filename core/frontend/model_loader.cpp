#include "core/frontend/model_loader.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/frontend/fbx_parser.h"

namespace fusebox {

// Generated at build time from resources/models/*.fbx (cmake/EmbedModels.cmake).
extern const std::vector<BuiltinModel>& embeddedModels();

const std::vector<BuiltinModel>& builtinModels() {
  static const std::vector<BuiltinModel> sorted = [] {
    std::vector<BuiltinModel> v = embeddedModels();
    std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.name < b.name; });
    return v;
  }();
  return sorted;
}

const BuiltinModel* findBuiltinModel(std::string_view name) {
  for (const BuiltinModel& m : builtinModels())
    if (m.name == name) return &m;
  return nullptr;
}

const char* demoModelName() { return "mlp"; }

ModelDef loadModel(const std::string& nameOrPath) {
  if (const BuiltinModel* b = findBuiltinModel(nameOrPath))
    return parseModel(b->source, "<builtin>/" + std::string(b->name) + ".fbx");
  bool looksLikePath = nameOrPath.find('/') != std::string::npos || nameOrPath.find('.') != std::string::npos;
  std::ifstream in(nameOrPath, std::ios::binary);
  if (!in) {
    if (looksLikePath) throw Error("cannot open model file '" + nameOrPath + "'");
    std::string names;
    for (const BuiltinModel& m : builtinModels()) names += (names.empty() ? "" : ", ") + std::string(m.name);
    throw Error("unknown model '" + nameOrPath + "': not a built-in model (" + names + ") nor a readable file");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parseModel(text.str(), nameOrPath);
}

}  // namespace fusebox

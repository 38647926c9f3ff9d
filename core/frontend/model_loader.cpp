#include "core/frontend/model_loader.h"

#include <algorithm>
#include <filesystem>

#include "core/frontend/fbx_parser.h"
#include "core/frontend/model_file.h"
#include "core/frontend/onnx/onnx_loader.h"

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

namespace {

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

ModelDef importedOnnx(const std::string& path) {
  OnnxModel m = loadOnnx(path);
  ModelDef def;
  def.name = std::filesystem::path(path).stem().string();
  def.file = path;
  def.description = "imported from ONNX (opset " + std::to_string(m.opset) + ")";
  m.graph.name = def.name;  // the file names the model (exporters often leave "torch-jit-export" or "main")
  def.imported = std::make_shared<const Graph>(std::move(m.graph));
  return def;
}

}  // namespace

ModelDef loadModel(const std::string& nameOrPath) {
  if (const BuiltinModel* b = findBuiltinModel(nameOrPath))
    return parseModel(b->source, "<builtin>/" + std::string(b->name) + ".fbx");
  if (endsWith(nameOrPath, ".onnx")) return importedOnnx(nameOrPath);
  bool looksLikePath = nameOrPath.find('/') != std::string::npos || nameOrPath.find('.') != std::string::npos;
  if (!looksLikePath && !modelPathExists(nameOrPath)) {
    std::string names;
    for (const BuiltinModel& m : builtinModels()) names += (names.empty() ? "" : ", ") + std::string(m.name);
    throw Error("unknown model '" + nameOrPath + "': not a built-in model (" + names + ") nor a readable file");
  }
  return parseModel(readModelFile(nameOrPath), nameOrPath);  // regular files only, size-limited
}

}  // namespace fusebox

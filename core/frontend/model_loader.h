// Where models come from: the built-in zoo (compiled into the binary from resources/models)
// or a `.fbx` file on disk.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/frontend/model.h"

namespace fusebox {

struct BuiltinModel {
  std::string_view name;
  std::string_view source;
};

const std::vector<BuiltinModel>& builtinModels();  // sorted by name
const BuiltinModel* findBuiltinModel(std::string_view name);
const char* demoModelName();

// A built-in model name, a path to a .fbx file, or a path to a .onnx file (imported as a traced
// graph). Throws Error (unreadable file, unknown model, ONNX errors naming the node) or
// ParseError (file:line:col).
ModelDef loadModel(const std::string& nameOrPath);

}  // namespace fusebox

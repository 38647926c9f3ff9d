#include "core/frontend/onnx/onnx_scope.h"

namespace fusebox {

namespace {

std::string safeScope(const std::string& s) {
  std::string out;
  for (char c : s.substr(0, kMaxScopeLength)) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    out += ok ? c : '_';
  }
  while (!out.empty() && out.back() == '.') out.pop_back();
  while (!out.empty() && out.front() == '.') out.erase(out.begin());
  return out;
}

// "['', 'layer2', 'layer2.0', 'layer2.0.conv1', 'conv2d']" -> "layer2.0.conv1": the entries are
// the enclosing modules, outermost first, then the node's own name (as torch 2.11 writes them).
std::string innermostModule(const std::string& list) {
  std::vector<std::string> entries;
  for (size_t open = list.find('\''); open != std::string::npos; open = list.find('\'', open + 1)) {
    size_t close = list.find('\'', open + 1);
    if (close == std::string::npos) break;
    entries.push_back(list.substr(open + 1, close - open - 1));
    open = close;
  }
  return entries.size() >= 2 ? entries[entries.size() - 2] : "";
}

// "/layer2/layer2.0/conv1/Conv" -> "layer2.layer2.0.conv1"; a name without '/' has no scope.
std::string scopeOfSlashPath(const std::string& name) {
  if (name.empty() || name[0] != '/') return "";
  std::string scope;
  size_t start = 1;
  for (size_t slash = name.find('/', start); slash != std::string::npos; slash = name.find('/', start)) {
    std::string part = name.substr(start, slash - start);
    if (!part.empty()) scope += (scope.empty() ? "" : ".") + part;
    start = slash + 1;
  }
  return scope;  // the text after the last '/' is the op ("Conv", "Conv_1")
}

}  // namespace

std::string onnxNodeScope(const std::string& nodeName, const std::vector<std::pair<std::string, std::string>>& metadata) {
  for (const auto& [key, value] : metadata)
    if (key == "pkg.torch.onnx.name_scopes") {
      std::string s = safeScope(innermostModule(value));
      if (!s.empty()) return s;
    }
  return safeScope(scopeOfSlashPath(nodeName));
}

}  // namespace fusebox

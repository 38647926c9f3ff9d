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

// "/layer2/layer2.0/conv1/Conv" -> "layer2.0.conv1"; a name without '/' has no scope. The
// TorchScript exporter names a ModuleList/Sequential child by its parent's attribute and index
// ("layer2.0" under "layer2", "h.0" under "transformer"), so a part that starts with the previous
// part and a dot replaces it: the result is the module's dotted path, as the dynamo exporter writes.
std::string scopeOfSlashPath(const std::string& name) {
  if (name.empty() || name[0] != '/') return "";
  std::string scope, last;
  size_t start = 1;
  for (size_t slash = name.find('/', start); slash != std::string::npos; slash = name.find('/', start)) {
    std::string part = name.substr(start, slash - start);
    start = slash + 1;
    if (part.empty()) continue;
    if (!last.empty() && part.size() > last.size() && part.compare(0, last.size() + 1, last + ".") == 0)
      scope.erase(scope.size() - last.size());  // "layer2" becomes "layer2.0"
    else if (!scope.empty())
      scope += ".";
    scope += part;
    last = part;
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

namespace {

// The parameter role of input `slot` of an ONNX op, named as the PyTorch module's parameter is.
std::string slotRole(const std::string& op, int slot) {
  struct Role {
    const char* op;
    int slot;
    const char* name;
  };
  static const Role roles[] = {
      {"Conv", 1, "weight"},       {"Conv", 2, "bias"},          {"ConvTranspose", 1, "weight"},     {"ConvTranspose", 2, "bias"},
      {"Gemm", 1, "weight"},       {"Gemm", 2, "bias"},          {"MatMul", 1, "weight"},            {"BatchNormalization", 1, "weight"},
      {"BatchNormalization", 2, "bias"}, {"BatchNormalization", 3, "running_mean"}, {"BatchNormalization", 4, "running_var"},
      {"LayerNormalization", 1, "weight"}, {"LayerNormalization", 2, "bias"}, {"Add", 1, "bias"}, {"Add", 0, "bias"},
  };
  for (const Role& r : roles)
    if (op == r.op && slot == r.slot) return r.name;
  return "";
}

}  // namespace

std::string moduleParamName(const std::vector<OnnxParamUse>& uses) {
  if (uses.empty()) return "";
  std::string scope = safeScope(uses[0].scope), role = slotRole(uses[0].op, uses[0].slot);
  for (const OnnxParamUse& u : uses)
    if (safeScope(u.scope) != scope || slotRole(u.op, u.slot) != role) return "";
  if (scope.empty() || role.empty()) return "";
  return scope + "." + role;
}

bool isGeneratedParamName(const std::string& name) { return name.rfind("onnx::", 0) == 0; }

}  // namespace fusebox

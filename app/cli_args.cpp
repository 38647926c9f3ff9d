#include "app/cli_args.h"

#include <cstdlib>

#include "core/ir/memory_budget.h"

namespace fusebox::cli {

Args::Args(const std::vector<std::string>& argv, const std::set<std::string>& valued, const std::set<std::string>& flags) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.size() < 2 || a[0] != '-') {
      positional_.push_back(a);
      continue;
    }
    std::string name = a, value;
    bool hasValue = false;
    if (auto eq = a.find('='); eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      hasValue = true;
    }
    if (flags.count(name)) {
      if (hasValue) throw UsageError("option " + name + " takes no value");
      flags_.insert(name);
    } else if (valued.count(name)) {
      if (!hasValue) {
        if (i + 1 >= argv.size()) throw UsageError("option " + name + " needs a value");
        value = argv[++i];
      }
      values_.emplace(name, value);
    } else {
      throw UsageError("unknown option " + name);
    }
  }
}

std::optional<std::string> Args::value(const std::string& name) const {
  auto range = values_.equal_range(name);
  if (range.first == range.second) return std::nullopt;
  return std::prev(range.second)->second;  // the last occurrence wins
}

std::vector<std::string> Args::values(const std::string& name) const {
  std::vector<std::string> out;
  for (auto [it, end] = values_.equal_range(name); it != end; ++it) out.push_back(it->second);
  return out;
}

std::string Args::valueOr(const std::string& name, const std::string& fallback) const {
  return value(name).value_or(fallback);
}

int Args::intValue(const std::string& name, int fallback, int min, int max) const {
  auto v = value(name);
  if (!v) return fallback;
  char* end = nullptr;
  long n = std::strtol(v->c_str(), &end, 10);
  if (v->empty() || *end != '\0' || n < min || n > max)
    throw UsageError(name + " must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got '" +
                     *v + "'");
  return static_cast<int>(n);
}

std::optional<int64_t> Args::byteSize(const std::string& name) const {
  auto v = value(name);
  if (!v) return std::nullopt;
  std::optional<int64_t> bytes = parseByteSize(*v);
  if (!bytes) throw UsageError(name + " must be a positive size such as 8G, 512M or 1.5GB, got '" + *v + "'");
  return bytes;
}

}  // namespace fusebox::cli

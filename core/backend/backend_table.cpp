// The backend table: one row per target.
#include "core/backend/backend.h"

namespace fusebox {

const Backend& cpuBackend();   // cpu_backend.cpp
const Backend& cudaBackend();  // cuda_backend.cpp

const std::vector<const Backend*>& backends() {
  static const std::vector<const Backend*> table = {&cpuBackend(), &cudaBackend()};
  return table;
}

std::string backendNames(const char* lastSeparator) {
  std::string s;
  const auto& table = backends();
  for (size_t i = 0; i < table.size(); ++i) s += (i == 0 ? "" : i + 1 == table.size() ? lastSeparator : ", ") + std::string(table[i]->name());
  return s;
}

const Backend& findBackend(const std::string& target) {
  for (const Backend* b : backends())
    if (target == b->name()) return *b;
  throw Error("unknown target '" + target + "' (available: " + backendNames(", ") + ")");
}

}  // namespace fusebox

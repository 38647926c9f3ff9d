#include "core/runtime/index_fault.h"

#include "core/ir/error.h"

namespace fusebox {

void throwIfIndexFault(const int64_t fault[3], const std::map<int, std::string>& sites) {
  if (fault[0] == 0) return;
  int site = static_cast<int>(fault[0] - 1);
  auto it = sites.find(site);
  std::string where = it != sites.end() ? it->second : "loop node n" + std::to_string(site);
  throw Error("index " + std::to_string(fault[1]) + " is out of range for a dimension of size " + std::to_string(fault[2]) +
              " in " + where + " (generated code did not read or write outside its buffers)");
}

}  // namespace fusebox

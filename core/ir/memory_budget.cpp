#include "core/ir/memory_budget.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace fusebox {

namespace {

std::atomic<int64_t>& budget() {
  static std::atomic<int64_t> b{defaultMemoryBudget()};
  return b;
}

}  // namespace

int64_t defaultMemoryBudget() {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || pageSize <= 0) return int64_t{4} << 30;
  return static_cast<int64_t>(pages) / 2 * static_cast<int64_t>(pageSize);
}

int64_t memoryBudget() { return budget().load(std::memory_order_relaxed); }

void setMemoryBudget(int64_t bytes) {
  if (bytes > 0) budget().store(bytes, std::memory_order_relaxed);
}

std::optional<int64_t> parseByteSize(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  std::string number(text.substr(0, i));
  if (number.empty() || number == ".") return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(number.c_str(), &end);
  if (*end != '\0') return std::nullopt;
  std::string unit;
  for (char c : text.substr(i)) unit += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 1;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "K" || unit == "KB" || unit == "KIB") scale = 1024.0;
  else if (unit == "M" || unit == "MB" || unit == "MIB") scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "GB" || unit == "GIB") scale = 1024.0 * 1024 * 1024;
  else if (unit == "T" || unit == "TB" || unit == "TIB") scale = 1024.0 * 1024 * 1024 * 1024;
  else return std::nullopt;
  double bytes = std::floor(v * scale);
  if (!(bytes >= 1) || bytes >= 9.2e18) return std::nullopt;
  return static_cast<int64_t>(bytes);
}

std::string formatBytes(int64_t bytes) {
  static const char* units[] = {"KB", "MB", "GB", "TB", "PB", "EB"};
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 1024 && u < 5) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

void checkMemory(std::optional<int64_t> bytes, const std::string& what, const std::string& forWhat,
                 const SourceLoc& loc, int64_t heldBytes) {
  int64_t limit = memoryBudget();
  if (bytes && *bytes <= limit - std::min(heldBytes, limit)) return;
  std::string size = bytes ? formatBytes(*bytes) : "more than 8 EB";
  std::string held = heldBytes > 0 ? " (with " + formatBytes(heldBytes) + " already in use)" : "";
  throw LimitError(what + " needs " + size + " for " + forWhat + held + ", over the memory budget of " +
                       formatBytes(limit) + " (--max-memory)",
                   loc);
}

}  // namespace fusebox

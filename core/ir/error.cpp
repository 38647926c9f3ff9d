#include "core/ir/error.h"

namespace fusebox {

std::string SourceLoc::str() const {
  if (!valid()) return file;
  return (file.empty() ? std::string("<input>") : file) + ":" + std::to_string(line) + ":" +
         std::to_string(col);
}

static std::string formatWithLoc(const std::string& message, const SourceLoc& loc) {
  std::string where = loc.str();
  return where.empty() ? message : where + ": " + message;
}

Error::Error(const std::string& message, SourceLoc loc)
    : std::runtime_error(formatWithLoc(message, loc)), loc_(std::move(loc)), message_(message) {}

}  // namespace fusebox

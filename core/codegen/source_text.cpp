#include "core/codegen/source_text.h"

#include <cstdio>
#include <set>

#include "core/ir/error.h"

namespace fusebox {

std::string commentText(std::string_view text, size_t maxLength) {
  std::string out;
  size_t n = std::min(text.size(), maxLength);
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    // '\\' could splice the next line into the comment; '?' could start a trigraph; '*' before
    // '/' closes a block comment in CUDA's preprocessor passes as in C++.
    bool plain = c >= 0x20 && c < 0x7f && c != '\\' && c != '?' && !(c == '*' && i + 1 < text.size() && text[i + 1] == '/');
    if (plain) {
      out += static_cast<char>(c);
      continue;
    }
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    out += buf;
  }
  if (text.size() > maxLength) out += "...";
  return out;
}

IdentifierTable::IdentifierTable(const std::vector<std::string>& names, const std::string& prefix) {
  std::set<std::string> taken;
  for (const std::string& name : names) {
    if (ids_.count(name)) continue;
    std::string base = prefix;
    for (char c : name) {
      if (base.size() >= kMaxIdentifier) break;
      unsigned char u = static_cast<unsigned char>(c);
      bool word = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || u == '_';
      base += word ? c : '_';
    }
    std::string id = base;
    for (int k = 2; taken.count(id); ++k) id = base + "_" + std::to_string(k);
    taken.insert(id);
    ids_.emplace(name, id);
  }
}

const std::string& IdentifierTable::operator()(const std::string& name) const {
  auto it = ids_.find(name);
  if (it == ids_.end()) throw Error("codegen: no identifier for buffer '" + commentText(name) + "'");
  return it->second;
}

}  // namespace fusebox

#include "core/codegen/source_text.h"

#include <cstdio>
#include <set>
#include <sstream>

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

namespace {

// The directives the printers write themselves: `#if FB_HAVE_CBLAS`, `#endif`, `#pragma unroll [N]`.
bool isPrinterDirective(const std::string& code) {
  size_t b = code.find_first_not_of(' ');
  std::string d = b == std::string::npos ? "" : code.substr(b);
  if (d == "#if FB_HAVE_CBLAS" || d == "#endif" || d == "#pragma unroll") return true;
  const std::string unroll = "#pragma unroll ";
  return d.rfind(unroll, 0) == 0 && d.size() > unroll.size() &&
         d.find_first_not_of("0123456789", unroll.size()) == std::string::npos;
}

}  // namespace

std::string generatedSourceProblem(const std::string& source, const std::string& prelude) {
  size_t at = source.find(prelude);
  if (at == std::string::npos) return "the source does not hold its prelude";
  std::istringstream in(source.substr(0, at) + source.substr(at + prelude.size()));
  std::string line;
  auto problem = [&](const char* why) { return std::string(why) + " in generated line: " + commentText(line); };
  while (std::getline(in, line)) {
    for (char c : line)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) return problem("a non-printable byte");
    size_t comment = line.find("//");
    std::string code = line.substr(0, comment);
    if (isPrinterDirective(code)) continue;
    for (const std::string fixed : {std::string("extern \"C\""), std::string("(\"\")"), std::string(kReassociatePragma)})  // its own literals
      for (size_t q; (q = code.find(fixed)) != std::string::npos;) code.erase(q, fixed.size());
    if (code.find_first_of("\"'#\\") != std::string::npos) return problem("a quote, # or backslash in code");
    if (comment == std::string::npos) continue;
    std::string text = line.substr(comment);
    if (text.find("*/") != std::string::npos || text.find("??") != std::string::npos || text.back() == '\\')
      return problem("comment text that could end or splice the comment");
  }
  return "";
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

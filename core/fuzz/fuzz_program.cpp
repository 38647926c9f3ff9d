#include "core/fuzz/fuzz_program.h"

#include <cctype>

#include "core/codegen/source_text.h"

namespace fusebox::fuzz {

namespace {

bool wordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

std::vector<std::string> splitScope(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (!path.empty() && start <= path.size()) {
    size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

}  // namespace

std::string programComment(const std::string& text) {
  // commentText escapes everything outside printable ASCII (newlines included) as \xNN.
  return commentText(text, 400);
}

bool mentionsName(const std::string& text, const std::string& name) {
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    bool before = at > 0 && wordChar(text[at - 1]);
    bool after = at + name.size() < text.size() && wordChar(text[at + name.size()]);
    if (!before && !after) return true;
  }
  return false;
}

std::string renameWord(const std::string& text, const std::string& from, const std::string& to) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    bool startsWord = text.compare(i, from.size(), from) == 0 && (i == 0 || !wordChar(text[i - 1])) &&
                      (i + from.size() >= text.size() || !wordChar(text[i + from.size()]));
    // Skip string literals ("tanh", "f32"): names never occur in them.
    if (text[i] == '"') {
      size_t end = text.find('"', i + 1);
      end = end == std::string::npos ? text.size() : end + 1;
      out += text.substr(i, end - i);
      i = end;
    } else if (startsWord) {
      out += to;
      i += from.size();
    } else {
      out += text[i++];
    }
  }
  return out;
}

std::string printProgram(const FuzzProgram& p) {
  std::string out;
  if (!p.comment.empty()) out += "# " + p.comment + "\n";
  out += "model " + p.name + "(";
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    const ProgramInput& in = p.inputs[i];
    out += "\n  " + in.name + ": " + in.type + (in.range.empty() ? "" : " " + in.range) + (i + 1 < p.inputs.size() ? "," : "");
  }
  out += p.inputs.empty() ? ") {\n" : "\n) {\n";
  std::vector<std::string> open;
  for (const ProgramStmt& s : p.stmts) {
    std::vector<std::string> want = splitScope(s.scope);
    size_t common = 0;
    while (common < open.size() && common < want.size() && open[common] == want[common]) ++common;
    while (open.size() > common) {
      open.pop_back();
      out += std::string(2 + 2 * open.size(), ' ') + "}\n";
    }
    while (open.size() < want.size()) {
      out += std::string(2 + 2 * open.size(), ' ') + "scope " + want[open.size()] + " {\n";
      open.push_back(want[open.size()]);
    }
    out += std::string(2 + 2 * open.size(), ' ') + s.text + "\n";
  }
  while (!open.empty()) {
    open.pop_back();
    out += std::string(2 + 2 * open.size(), ' ') + "}\n";
  }
  out += "  return ";
  for (size_t i = 0; i < p.outputs.size(); ++i) out += (i ? ", " : "") + p.outputs[i];
  return out + "\n}\n";
}

}  // namespace fusebox::fuzz

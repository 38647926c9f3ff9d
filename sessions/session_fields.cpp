#include "sessions/session_fields.h"

namespace fusebox {

std::optional<std::vector<int64_t>> parseIdList(std::string_view text, int64_t max) {
  std::vector<int64_t> out;
  if (text.empty()) return out;
  size_t i = 0;
  while (true) {
    size_t start = i;
    int64_t v = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      int64_t d = text[i] - '0';
      if (v > (max - d) / 10) return std::nullopt;  // v * 10 + d > max, without overflowing
      v = v * 10 + d;
      ++i;
    }
    if (i == start) return std::nullopt;
    out.push_back(v);
    if (i == text.size()) return out;
    if (text[i] != ',') return std::nullopt;
    ++i;
  }
}

std::string textProblem(std::string_view text, int64_t maxBytes) {
  if (static_cast<int64_t>(text.size()) > maxBytes)
    return std::to_string(text.size()) + " bytes, more than the " + std::to_string(maxBytes) + " allowed";
  if (text.find('\0') != std::string_view::npos) return "a NUL byte inside the text";
  return "";
}

std::string excerpt(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 40)) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  return "'" + out + (text.size() > 40 ? "...'" : "'");
}

}  // namespace fusebox

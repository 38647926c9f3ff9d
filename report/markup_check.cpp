#include "report/markup_check.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace fusebox {

namespace {

const std::set<std::string, std::less<>>& allowedElements() {
  static const std::set<std::string, std::less<>> s = {
      // the report
      "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "b", "br", "table", "tr", "th", "td", "pre", "details",
      "summary", "div",
      // SVG: the report's charts and Graphviz's output for the attributes dot_sanitizer keeps
      "svg", "g", "text", "rect", "polyline", "polygon", "path", "ellipse", "a"};
  return s;
}

const std::set<std::string, std::less<>>& allowedAttributes() {
  static const std::set<std::string, std::less<>> s = {
      "charset", "class", "colspan", "id", "width", "height", "viewbox", "xmlns", "xmlns:xlink", "transform", "fill", "stroke", "points",
      "d", "x", "y", "cx", "cy", "rx", "ry", "text-anchor", "font-family", "font-size", "font-weight", "font-style", "stroke-width",
      "stroke-dasharray", "fill-opacity", "stroke-opacity", "xlink:title", "href"};
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Decodes the entities a value may use to spell a scheme ("jav&#x61;script:") and drops the
// whitespace and control characters browsers ignore inside a URL.
std::string normalized(std::string_view v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(v[i]);
    if (c == '&') {
      size_t end = v.find(';', i);
      if (end != std::string_view::npos && end - i < 12) {
        std::string ent = lower(v.substr(i + 1, end - i - 1));
        long code = -1;
        if (ent.size() > 1 && ent[0] == '#') code = ent[1] == 'x' ? std::strtol(ent.c_str() + 2, nullptr, 16) : std::strtol(ent.c_str() + 1, nullptr, 10);
        else if (ent == "colon") code = ':';
        if (code > 0 && code < 128) {
          if (code > 0x20) out += static_cast<char>(std::tolower(static_cast<int>(code)));
          i = end;
          continue;
        }
      }
    }
    if (c > 0x20) out += static_cast<char>(std::tolower(c));
  }
  return out;
}

bool hasScheme(const std::string& n) {
  for (const char* s : {"javascript:", "vbscript:", "data:", "file:", "livescript:"})
    if (n.find(s) != std::string::npos) return true;
  return false;
}

std::string at(size_t i, const std::string& what) { return "offset " + std::to_string(i) + ": " + what; }

}  // namespace

std::string markupProblem(std::string_view h) {
  size_t i = 0;
  while (i < h.size()) {
    char c = h[i];
    if (c == '&') {
      size_t j = i + 1;
      if (j < h.size() && h[j] == '#') ++j;
      size_t start = j;
      while (j < h.size() && std::isalnum(static_cast<unsigned char>(h[j]))) ++j;
      if (j == start || j >= h.size() || h[j] != ';') return at(i, "a bare '&' (not an entity)");
      i = j + 1;
      continue;
    }
    if (c == '>') return at(i, "a bare '>' in text");
    if (c != '<') {
      ++i;
      continue;
    }
    if (h.substr(i, 4) == "<!--") {
      size_t end = h.find("-->", i + 4);
      if (end == std::string_view::npos) return at(i, "an unterminated comment");
      i = end + 3;
      continue;
    }
    if (lower(h.substr(i, 9)) == "<!doctype") {
      size_t end = h.find('>', i);
      if (end == std::string_view::npos) return at(i, "an unterminated doctype");
      i = end + 1;
      continue;
    }
    size_t j = i + 1;
    bool closing = j < h.size() && h[j] == '/';
    if (closing) ++j;
    size_t nameStart = j;
    while (j < h.size() && (std::isalnum(static_cast<unsigned char>(h[j])) || h[j] == '-' || h[j] == ':')) ++j;
    std::string name = lower(h.substr(nameStart, j - nameStart));
    if (name.empty()) return at(i, "a bare '<' in text");
    if (!allowedElements().count(name)) return at(i, "element <" + name + "> is not allowed");
    // attributes
    while (true) {
      while (j < h.size() && std::isspace(static_cast<unsigned char>(h[j]))) ++j;
      if (j >= h.size()) return at(i, "an unterminated tag <" + name + ">");
      if (h[j] == '>') break;
      if (h[j] == '/' && j + 1 < h.size() && h[j + 1] == '>') {
        ++j;
        break;
      }
      if (closing) return at(j, "attributes on a closing tag");
      size_t a = j;
      while (j < h.size() && !std::isspace(static_cast<unsigned char>(h[j])) && h[j] != '=' && h[j] != '>' && h[j] != '/') ++j;
      std::string attr = lower(h.substr(a, j - a));
      if (attr.empty()) return at(j, "a malformed attribute in <" + name + ">");
      if (!allowedAttributes().count(attr)) return at(a, "attribute '" + attr + "' on <" + name + "> is not allowed");
      std::string value;
      if (j < h.size() && h[j] == '=') {
        ++j;
        if (j < h.size() && (h[j] == '"' || h[j] == '\'')) {
          char q = h[j];
          size_t end = h.find(q, j + 1);
          if (end == std::string_view::npos) return at(j, "an unterminated attribute value");
          value = std::string(h.substr(j + 1, end - j - 1));
          if (value.find('<') != std::string::npos) return at(j, "'<' inside an attribute value");
          j = end + 1;
        } else {
          size_t v = j;
          while (j < h.size() && !std::isspace(static_cast<unsigned char>(h[j])) && h[j] != '>') ++j;
          value = std::string(h.substr(v, j - v));
          if (value.find_first_of("\"'<=`") != std::string::npos) return at(v, "a malformed unquoted attribute value");
        }
      }
      std::string n = normalized(value);
      if (attr == "href" && (n.empty() || n[0] != '#')) return at(a, "a link that is not an in-document anchor");
      if (hasScheme(n)) return at(a, "a URL scheme inside attribute '" + attr + "'");
    }
    ++j;  // past '>'
    if (!closing && (name == "style" || name == "title")) {  // raw text: up to the closing tag
      size_t end = lower(h.substr(j)).find("</" + name);
      if (end == std::string::npos) return at(i, "an unterminated <" + name + ">");
      std::string_view body = h.substr(j, end);
      if (name == "style" && (lower(body).find("url(") != std::string::npos || lower(body).find("@import") != std::string::npos ||
                              lower(body).find("expression(") != std::string::npos))
        return at(j, "an external reference in the style sheet");
      if (name == "title" && body.find('<') != std::string::npos) return at(j, "markup in a title");
      i = j + end;
      continue;
    }
    i = j;
  }
  return "";
}

}  // namespace fusebox

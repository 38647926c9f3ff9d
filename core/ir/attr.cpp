#include "core/ir/attr.h"

#include <cmath>
#include <cstdio>

namespace fusebox {

AttrKind attrKind(const Attr& a) { return static_cast<AttrKind>(a.index()); }

const char* attrKindName(AttrKind k) {
  switch (k) {
    case AttrKind::Int: return "int";
    case AttrKind::Float: return "float";
    case AttrKind::Bool: return "bool";
    case AttrKind::String: return "string";
    case AttrKind::Ints: return "int list";
    case AttrKind::Shape: return "shape";
    case AttrKind::Dim: return "dim";
  }
  return "?";
}

static std::string floatStr(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string attrStr(const Attr& a) {
  struct Visitor {
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return floatStr(v); }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(const std::string& v) const { return "\"" + v + "\""; }
    std::string operator()(const std::vector<int64_t>& v) const {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
      return s + "]";
    }
    std::string operator()(const Shape& v) const { return shapeStr(v); }
    std::string operator()(const Dim& v) const { return v.str(); }
  };
  return std::visit(Visitor{}, a);
}

}  // namespace fusebox

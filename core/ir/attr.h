// Node attributes: small typed values keyed by name (ordered, so printing is deterministic).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "core/ir/shape.h"

namespace fusebox {

enum class AttrKind { Int, Float, Bool, String, Ints, Shape, Dim };

using Attr = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>, Shape, Dim>;
using AttrMap = std::map<std::string, Attr>;

AttrKind attrKind(const Attr& a);
const char* attrKindName(AttrKind k);
std::string attrStr(const Attr& a);  // human-readable, also used by the text printer

}  // namespace fusebox

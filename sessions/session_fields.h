// Checks of single values read from a session file (no SQL here): a session may come from anyone,
// so every number and text is checked before the rest of Fusebox sees it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fusebox {

// "3,4,17" (the kernel table's node and provenance lists): non-negative decimal ids no larger than
// `max`, separated by single commas; "" is the empty list. nullopt for anything else.
std::optional<std::vector<int64_t>> parseIdList(std::string_view text, int64_t max);

// Why `text` is not acceptable as a stored text field of at most `maxBytes` bytes (a NUL byte, too
// long), or "" when it is.
std::string textProblem(std::string_view text, int64_t maxBytes);

// A short, printable excerpt of a bad value for an error message.
std::string excerpt(std::string_view text);

}  // namespace fusebox

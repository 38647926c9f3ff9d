// What a Fusebox report may contain, checked on the finished text: only the elements and
// attributes the report and Graphviz's SVG are written with, no scripts, no event handlers, no
// style attributes, no links (an href is allowed only as an in-document anchor, "#..."), no URL
// schemes anywhere inside a tag, and every '&' an entity. Session text, escaped by htmlEscape,
// can never add a tag or an attribute, so any violation means something was not escaped. Used on
// Graphviz's SVG before it is embedded, by the tests and by the session fuzzer.
#pragma once

#include <string>
#include <string_view>

namespace fusebox {

// "" when `html` keeps to the rules above, else the first violation and its offset.
std::string markupProblem(std::string_view html);

}  // namespace fusebox

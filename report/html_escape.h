// The one escaping function for HTML and SVG text: everything a report shows that came from a
// session (names, configs, graph text, code, logs, reasons, paths) goes through htmlEscape, in
// element text and in quoted attribute values alike. Reports never turn session text into a link
// (no href, src or URL from a session, whatever its scheme), so there is no URL filter to get wrong;
// see markup_check.h for what a report may contain.
#pragma once

#include <string>
#include <string_view>

namespace fusebox {

// & < > " ' become entities; C0 control characters other than tab, newline and carriage return,
// DEL, and bytes that are not valid UTF-8 become U+FFFD, so the text cannot end an element,
// start a tag or an attribute, or confuse a parser about the encoding.
std::string htmlEscape(std::string_view text);

// `text` with bytes that are not valid UTF-8 replaced by U+FFFD (no other change).
std::string validUtf8(std::string_view text);

}  // namespace fusebox

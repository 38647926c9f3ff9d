// Model text in generated source. Names, scopes and file names come from model files, which are
// untrusted: they reach generated C++/CUDA only through these two functions, so a crafted name
// can neither end a comment nor become code, and no two buffers share an identifier.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace fusebox {

// `text` made safe to follow `//` in generated source: printable ASCII only (anything else,
// backslashes and `?` included, as \xNN escapes), `*/` broken up, at most `maxLength` characters
// of the original (then "..."). The result never ends a line, a comment or a token.
std::string commentText(std::string_view text, size_t maxLength = 160);

// What the printers promise about generated source outside its fixed `prelude`: model text
// appears only in `//` comments, as commentText made it, and in identifiers. So no line holds a
// byte outside printable ASCII, a `#`, a backslash or a quote before its `//` (but the printers'
// own `extern "C"`, `__builtin_nan("")`, `#if FB_HAVE_CBLAS`/`#endif`, `#pragma unroll`), and no comment holds
// `*/`, `??` or ends in a backslash.
// Returns "" or what is wrong, with the line.
std::string generatedSourceProblem(const std::string& source, const std::string& prelude);

// The clang pragma that lets one compound statement's floating-point operations be reassociated
// (a sum's accumulation); one of the printers' own literals generatedSourceProblem allows.
inline const char* const kReassociatePragma = "_Pragma(\"clang fp reassociate(on)\")";

// Unique C identifiers for a set of names: `prefix` + the name's letters, digits and underscores
// (other characters become `_`), at most kMaxIdentifier characters, with `_2`, `_3`, ... when
// two names would otherwise read the same. Deterministic: the same names give the same table.
class IdentifierTable {
public:
  static constexpr size_t kMaxIdentifier = 48;
  IdentifierTable(const std::vector<std::string>& names, const std::string& prefix);
  // The identifier of `name`; throws Error for a name the table was not built from.
  const std::string& operator()(const std::string& name) const;

private:
  std::map<std::string, std::string> ids_;
};

}  // namespace fusebox

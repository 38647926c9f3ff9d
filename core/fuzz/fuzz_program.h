// A generated .fbx program kept as structure (inputs, one statement per line, outputs) so that
// the minimizer can drop statements and inputs and print the smaller program again.
#pragma once

#include <string>
#include <vector>

namespace fusebox::fuzz {

struct ProgramInput {
  std::string name;
  std::string type;   // "f32[3, 1, 5]"
  std::string range;  // "" or "range(0, 7)" (integer inputs)
};

struct ProgramStmt {
  std::string scope;  // "" (top level) or a dotted path of nested scopes: "s0.s1"
  std::string name;   // the value (or param) it defines
  std::string text;   // "v3 = relu(v2)" or "param p0: f32[4, 5] = randn(seed=3, std=0.5)"
  bool isParam = false;
};

struct FuzzProgram {
  std::string name = "fuzz";
  std::string comment;  // header comment, one line (already safe: see programComment)
  std::vector<ProgramInput> inputs;
  std::vector<ProgramStmt> stmts;
  std::vector<std::string> outputs;  // expressions after `return`
};

// The .fbx text: inputs one per line, nested scopes opened and closed as statements need them.
std::string printProgram(const FuzzProgram& p);

// `text` made safe for a one-line `#` comment: no newline or control characters survive.
std::string programComment(const std::string& text);

// Whether `text` mentions the identifier `name` as a whole word (not as part of v12 or s0.v1).
bool mentionsName(const std::string& text, const std::string& name);
// `text` with every whole-word `from` replaced by `to`.
std::string renameWord(const std::string& text, const std::string& from, const std::string& to);

}  // namespace fusebox::fuzz

// The syntax tree of a `.fbx` model: what the parser produces and the tracer consumes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/dtype.h"
#include "core/ir/error.h"
#include "core/ir/graph.h"

namespace fusebox {

// A dimension as written: a number or a symbol such as B.
struct DimExpr {
  std::optional<int64_t> value;
  std::string symbol;
  SourceLoc loc;
};

struct TypeExpr {
  DType dtype = DType::F32;
  std::vector<DimExpr> dims;
  SourceLoc loc;
};

// The deepest nesting the parser accepts and the tracer evaluates: parentheses, calls, lists and
// unary minus in an expression, or nested scopes. Deeper input is a ParseError at the opening
// token, never a stack overflow. Operator chains (a + b - c + ...) are not nesting: the parser
// keeps them flat, however long.
constexpr int kMaxNestingDepth = 256;

struct Expr {
  enum class Kind { Number, Ident, String, Bool, Call, Binary, Negate, List };
  Kind kind = Kind::Number;
  SourceLoc loc;
  double number = 0;       // Number
  bool isInteger = false;  // Number written without '.', 'e' or 'inf'
  bool boolean = false;    // Bool
  // Ident / String / Call name / Binary: one operator character per operator of a left-associative
  // chain of one precedence level ("+" for a + b, "+-+" for a + b - c + d; "*/" for a * b / c).
  std::string text;
  std::vector<Expr> args;  // Call arguments, Binary operands (text.size() + 1 of them), Negate operand, List elements
  std::vector<SourceLoc> opLocs;  // Binary: where each operator is written
  std::vector<std::string> argNames;  // Call: keyword of each argument, "" when positional
};

struct InputDecl {
  std::string name;
  TypeExpr type;
  std::optional<std::pair<int64_t, int64_t>> range;  // integer inputs: demo values in [lo, hi)
  SourceLoc loc;
};

struct Stmt {
  enum class Kind { Param, Assign, Return, Scope };
  Kind kind = Kind::Assign;
  SourceLoc loc;
  std::string name;  // Param / Assign target / Scope name
  TypeExpr type;     // Param
  InitSpec init;     // Param
  std::vector<Expr> values;  // Assign: one; Return: one or more
  std::vector<Stmt> body;    // Scope
};

struct ModelDef {
  std::string name;
  std::string file;         // where it was read from ("<builtin>/mlp.fbx" for the zoo)
  std::string description;  // the leading comment lines
  // A model imported as a graph already (ONNX): the trace stage takes it as is and `body` is empty.
  std::shared_ptr<const Graph> imported;
  std::vector<InputDecl> inputs;
  std::vector<std::pair<std::string, int64_t>> dims;  // default sizes of symbolic dims
  std::vector<Stmt> body;
  SourceLoc loc;
};

}  // namespace fusebox

// Errors that carry where they happened: a source location (file:line:col)
// and, for graph errors, the node. Every user-facing failure goes through these.
#pragma once

#include <stdexcept>
#include <string>

namespace fusebox {

struct SourceLoc {
  std::string file;
  int line = 0;
  int col = 0;

  bool valid() const { return line > 0; }
  std::string str() const;  // "file:line:col" (or "" when unknown)
};

class Error : public std::runtime_error {
public:
  explicit Error(const std::string& message, SourceLoc loc = {});
  const SourceLoc& loc() const { return loc_; }
  const std::string& message() const { return message_; }

private:
  SourceLoc loc_;
  std::string message_;
};

// Malformed model text.
class ParseError : public Error {
public:
  using Error::Error;
};

// An op's inputs or attributes do not fit its schema (shapes, dtypes, arity).
class ShapeError : public Error {
public:
  using Error::Error;
};

// A graph that breaks an IR invariant.
class VerifyError : public Error {
public:
  using Error::Error;
};

// The model asks for more than Fusebox allows: memory over the budget (--max-memory), a model
// file over the size limit. The message names what was being made and the sizes.
class LimitError : public Error {
public:
  using Error::Error;
};

}  // namespace fusebox

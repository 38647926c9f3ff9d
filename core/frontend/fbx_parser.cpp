#include "core/frontend/fbx_parser.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>

namespace fusebox {

namespace {

enum class Tok { Name, Number, String, Punct, End };

struct Token {
  Tok kind = Tok::End;
  std::string text;
  double number = 0;
  bool isInteger = false;
  SourceLoc loc;
};

class Lexer {
public:
  Lexer(std::string_view src, std::string file) : src_(src), file_(std::move(file)) {}

  // Leading '#' comment lines, before any token: the model's description.
  std::string leadingComment() {
    std::string out;
    size_t p = 0;
    while (p < src_.size()) {
      size_t lineEnd = src_.find('\n', p);
      if (lineEnd == std::string_view::npos) lineEnd = src_.size();
      std::string_view line = src_.substr(p, lineEnd - p);
      size_t first = line.find_first_not_of(" \t\r");
      if (first == std::string_view::npos) {
        if (!out.empty()) break;
      } else if (line[first] == '#') {
        std::string_view text = line.substr(first + 1);
        while (!text.empty() && (text.front() == ' ' || text.front() == '#')) text.remove_prefix(1);
        while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
        if (!text.empty()) out += (out.empty() ? "" : " ") + std::string(text);
      } else {
        break;
      }
      p = lineEnd + 1;
    }
    return out;
  }

  Token next() {
    skipSpace();
    Token t;
    t.loc = here();
    if (pos_ >= src_.size()) return t;
    char c = src_[pos_];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '_' ||
                                    (src_[pos_] == '.' && pos_ + 1 < src_.size() &&
                                     (std::isalpha(static_cast<unsigned char>(src_[pos_ + 1])) || src_[pos_ + 1] == '_'))))
        advance();
      t.kind = Tok::Name;
      t.text = std::string(src_.substr(start, pos_ - start));
      if (t.text == "inf" || t.text == "nan") {
        t.kind = Tok::Number;
        t.number = t.text == "inf" ? INFINITY : NAN;
      }
      return t;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && pos_ + 1 < src_.size() && std::isdigit(static_cast<unsigned char>(src_[pos_ + 1])))) {
      size_t start = pos_;
      bool isInt = true;
      while (pos_ < src_.size() && std::isdigit(static_cast<unsigned char>(src_[pos_]))) advance();
      if (pos_ < src_.size() && src_[pos_] == '.') {
        isInt = false;
        advance();
        while (pos_ < src_.size() && std::isdigit(static_cast<unsigned char>(src_[pos_]))) advance();
      }
      if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
        isInt = false;
        advance();
        if (pos_ < src_.size() && (src_[pos_] == '+' || src_[pos_] == '-')) advance();
        if (pos_ >= src_.size() || !std::isdigit(static_cast<unsigned char>(src_[pos_])))
          throw ParseError("malformed number: exponent has no digits", t.loc);
        while (pos_ < src_.size() && std::isdigit(static_cast<unsigned char>(src_[pos_]))) advance();
      }
      if (pos_ < src_.size() && (std::isalpha(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '_'))
        throw ParseError("malformed number '" + std::string(src_.substr(start, pos_ - start + 1)) + "'", t.loc);
      std::string text(src_.substr(start, pos_ - start));
      t.kind = Tok::Number;
      t.text = text;
      t.isInteger = isInt;
      t.number = std::strtod(text.c_str(), nullptr);
      if (isInt && text.size() > 18) throw ParseError("integer literal " + text + " is too large", t.loc);
      return t;
    }
    if (c == '"') {
      advance();
      std::string text;
      while (pos_ < src_.size() && src_[pos_] != '"' && src_[pos_] != '\n') {
        text += src_[pos_];
        advance();
      }
      if (pos_ >= src_.size() || src_[pos_] != '"') throw ParseError("unterminated string literal", t.loc);
      advance();
      t.kind = Tok::String;
      t.text = text;
      return t;
    }
    static const std::string punct = "()[]{},:=+-*/;";
    if (punct.find(c) != std::string::npos) {
      advance();
      t.kind = Tok::Punct;
      t.text = std::string(1, c);
      return t;
    }
    std::string shown = std::isprint(static_cast<unsigned char>(c)) ? std::string(1, c)
                                                                     : "\\x" + std::to_string(static_cast<unsigned char>(c));
    throw ParseError("unexpected character '" + shown + "'", t.loc);
  }

private:
  SourceLoc here() const { return SourceLoc{file_, line_, col_}; }
  void advance() {
    if (src_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  void skipSpace() {
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (c == '#') {
        while (pos_ < src_.size() && src_[pos_] != '\n') advance();
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        advance();
      } else {
        break;
      }
    }
  }

  std::string_view src_;
  std::string file_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
};

class Parser {
public:
  Parser(std::string_view src, const std::string& file) : lex_(src, file) {
    description_ = lex_.leadingComment();
    tok_ = lex_.next();
  }

  ModelDef parseFile() {
    ModelDef m;
    m.description = description_;
    if (tok_.kind == Tok::End) throw ParseError("empty model file: expected 'model NAME(...) { ... }'", tok_.loc);
    m.loc = tok_.loc;
    expectKeyword("model");
    m.name = expectName("model name");
    m.file = tok_.loc.file;
    expectPunct("(");
    std::set<std::string> names;
    if (!isPunct(")")) {
      do {
        InputDecl in;
        in.loc = tok_.loc;
        in.name = expectName("input name");
        if (!names.insert(in.name).second) throw ParseError("duplicate input '" + in.name + "'", in.loc);
        expectPunct(":");
        in.type = parseType();
        if (isName("range")) {
          SourceLoc at = tok_.loc;
          take();
          expectPunct("(");
          int64_t lo = expectInt("range start");
          expectPunct(",");
          int64_t hi = expectInt("range end");
          expectPunct(")");
          if (hi <= lo) throw ParseError("range end must be greater than its start", at);
          if (isFloating(in.type.dtype)) throw ParseError("range(...) is only for integer inputs", at);
          in.range = {lo, hi};
        }
        m.inputs.push_back(std::move(in));
      } while (acceptPunct(","));
    }
    expectPunct(")");
    if (isName("dims")) {
      take();
      expectPunct("(");
      do {
        SourceLoc at = tok_.loc;
        std::string sym = expectName("dimension name");
        expectPunct("=");
        int64_t v = expectInt("dimension size");
        if (v < 0) throw ParseError("dimension " + sym + " must not be negative", at);
        for (auto& [s, _] : m.dims)
          if (s == sym) throw ParseError("dimension " + sym + " is given twice", at);
        m.dims.emplace_back(sym, v);
      } while (acceptPunct(","));
      expectPunct(")");
    }
    expectPunct("{");
    m.body = parseBlock();
    if (tok_.kind != Tok::End) throw ParseError("unexpected " + describe(tok_) + " after the end of the model", tok_.loc);
    return m;
  }

private:
  std::vector<Stmt> parseBlock() {  // after '{', through the matching '}'
    std::vector<Stmt> body;
    while (!isPunct("}")) {
      if (tok_.kind == Tok::End) throw ParseError("missing '}': the model body is not closed", tok_.loc);
      if (acceptPunct(";")) continue;
      body.push_back(parseStmt());
    }
    take();
    return body;
  }

  Stmt parseStmt() {
    Stmt s;
    s.loc = tok_.loc;
    if (isName("param")) {
      take();
      s.kind = Stmt::Kind::Param;
      s.name = expectName("parameter name");
      expectPunct(":");
      s.type = parseType();
      expectPunct("=");
      s.init = parseInit();
    } else if (isName("scope")) {
      take();
      s.kind = Stmt::Kind::Scope;
      s.name = expectName("scope name");
      Nesting n(*this, s.loc, "scope");
      expectPunct("{");
      s.body = parseBlock();
    } else if (isName("return")) {
      take();
      s.kind = Stmt::Kind::Return;
      do s.values.push_back(parseExpr());
      while (acceptPunct(","));
    } else {
      s.kind = Stmt::Kind::Assign;
      s.name = expectName("a statement (param, scope, return or NAME = expr)");
      if (!isPunct("=")) throw ParseError("expected '=' after '" + s.name + "', found " + describe(tok_), tok_.loc);
      take();
      s.values.push_back(parseExpr());
    }
    return s;
  }

  TypeExpr parseType() {
    TypeExpr t;
    t.loc = tok_.loc;
    std::string name = expectName("dtype (f32, f64, f16, bf16, i64, i32, bool)");
    auto dt = parseDType(name);
    if (!dt) throw ParseError("unknown dtype '" + name + "' (expected f32, f64, f16, bf16, i64, i32 or bool)", t.loc);
    t.dtype = *dt;
    expectPunct("[");
    if (!isPunct("]")) {
      do {
        DimExpr d;
        d.loc = tok_.loc;
        if (tok_.kind == Tok::Number) {
          d.value = expectInt("dimension size");
          if (*d.value < 0) throw ParseError("dimension size must not be negative", d.loc);
        } else if (acceptPunct("-")) {
          throw ParseError("dimension size must not be negative", d.loc);
        } else {
          d.symbol = expectName("dimension (a size or a symbol such as B)");
        }
        t.dims.push_back(std::move(d));
      } while (acceptPunct(","));
    }
    expectPunct("]");
    return t;
  }

  InitSpec parseInit() {
    InitSpec init;
    SourceLoc at = tok_.loc;
    std::string kind = expectName("initializer (zeros, ones, randn(...), uniform(...), full(...))");
    if (kind == "zeros") init.kind = InitSpec::Kind::Zeros;
    else if (kind == "ones") init.kind = InitSpec::Kind::Ones;
    else if (kind == "randn" || kind == "uniform") {
      init.kind = kind == "randn" ? InitSpec::Kind::Randn : InitSpec::Kind::Uniform;
      init.a = kind == "randn" ? 1.0 : -1.0;
      init.b = 1.0;
      expectPunct("(");
      if (!isPunct(")")) {
        do {
          SourceLoc kat = tok_.loc;
          std::string key = expectName("initializer argument");
          expectPunct("=");
          double v = expectNumber("initializer argument value");
          if (key == "seed") {
            if (!(v >= 0 && v < 18446744073709551616.0) || v != std::floor(v)) throw ParseError("seed must be a non-negative integer", kat);
            init.seed = static_cast<uint64_t>(v);
          }
          else if (key == "std" && kind == "randn") init.a = v;
          else if (key == "low" && kind == "uniform") init.a = v;
          else if (key == "high" && kind == "uniform") init.b = v;
          else throw ParseError("unknown argument '" + key + "' for " + kind, kat);
        } while (acceptPunct(","));
      }
      expectPunct(")");
    } else if (kind == "full") {
      init.kind = InitSpec::Kind::Full;
      expectPunct("(");
      init.a = expectNumber("fill value");
      expectPunct(")");
    } else {
      throw ParseError("unknown initializer '" + kind + "' (expected zeros, ones, randn, uniform or full)", at);
    }
    if (acceptPunct("*")) {
      double scale = expectNumber("scale factor");
      if (init.kind == InitSpec::Kind::Randn) init.a *= scale;
      else if (init.kind == InitSpec::Kind::Uniform) init.a *= scale, init.b *= scale;
      else if (init.kind == InitSpec::Kind::Zeros) {}
      else if (init.kind == InitSpec::Kind::Ones) init.kind = InitSpec::Kind::Full, init.a = scale;
      else init.a *= scale;
    }
    return init;
  }

  // One nesting level (parenthesis, call, list, unary minus, scope) for as long as it lives.
  class Nesting {
  public:
    Nesting(Parser& p, const SourceLoc& at, const char* what) : p_(p) {
      if (++p_.depth_ > kMaxNestingDepth)
        throw ParseError(std::string(what) + " nested too deeply (more than " + std::to_string(kMaxNestingDepth) + " levels)", at);
    }
    ~Nesting() { --p_.depth_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

  private:
    Parser& p_;
  };

  Expr parseExpr() { return chain("+-", &Parser::parseTerm); }
  Expr parseTerm() { return chain("*/", &Parser::parseUnary); }
  // operand {op operand} with op one of `ops`, left-associative, kept flat: a loop, not recursion,
  // so a 100,000-term sum is as shallow as a + b.
  Expr chain(const char* ops, Expr (Parser::*operand)()) {
    Expr first = (this->*operand)();
    auto isOp = [&] { return tok_.kind == Tok::Punct && std::string_view(ops).find(tok_.text[0]) != std::string_view::npos; };
    if (!isOp()) return first;
    Expr e;
    e.kind = Expr::Kind::Binary;
    e.loc = tok_.loc;
    e.args.push_back(std::move(first));
    while (isOp()) {
      e.opLocs.push_back(tok_.loc);
      e.text += take().text;
      e.args.push_back((this->*operand)());
    }
    return e;
  }
  Expr parseUnary() {
    if (isPunct("-")) {
      Expr e;
      e.kind = Expr::Kind::Negate;
      e.loc = take().loc;
      Nesting n(*this, e.loc, "unary minus");
      e.args.push_back(parseUnary());
      return e;
    }
    return parsePrimary();
  }
  Expr parsePrimary() {
    Expr e;
    e.loc = tok_.loc;
    std::optional<Nesting> nesting;
    if (isPunct("(") || isPunct("[")) nesting.emplace(*this, e.loc, "expression");
    if (tok_.kind == Tok::Number) {
      Token t = take();
      e.kind = Expr::Kind::Number;
      e.number = t.number;
      e.isInteger = t.isInteger;
      return e;
    }
    if (tok_.kind == Tok::String) {
      e.kind = Expr::Kind::String;
      e.text = take().text;
      return e;
    }
    if (acceptPunct("(")) {
      e = parseExpr();
      expectPunct(")");
      return e;
    }
    if (acceptPunct("[")) {
      e.kind = Expr::Kind::List;
      if (!isPunct("]")) {
        do e.args.push_back(parseExpr());
        while (acceptPunct(","));
      }
      expectPunct("]");
      return e;
    }
    if (tok_.kind == Tok::Name) {
      std::string name = take().text;
      if (name == "true" || name == "false") {
        e.kind = Expr::Kind::Bool;
        e.boolean = name == "true";
        return e;
      }
      if (!acceptPunct("(")) {
        e.kind = Expr::Kind::Ident;
        e.text = name;
        return e;
      }
      e.kind = Expr::Kind::Call;
      e.text = name;
      nesting.emplace(*this, e.loc, "call");
      if (!isPunct(")")) {
        do {
          std::string key;
          if (tok_.kind == Tok::Name && peekIsAssign()) {
            key = take().text;
            take();  // '='
          }
          e.argNames.push_back(key);
          e.args.push_back(parseExpr());
        } while (acceptPunct(","));
      }
      if (!isPunct(")")) throw ParseError("expected ',' or ')' in the call to " + name + ", found " + describe(tok_), tok_.loc);
      take();
      return e;
    }
    throw ParseError("expected an expression, found " + describe(tok_), tok_.loc);
  }

  // Lookahead of one token past a name: is it '=' (a keyword argument)?
  bool peekIsAssign() {
    Lexer saved = lex_;
    Token after = lex_.next();
    lex_ = saved;
    return after.kind == Tok::Punct && after.text == "=";
  }

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::End: return "end of file";
      case Tok::Name: return "'" + t.text + "'";
      case Tok::Number: return "number " + (t.text.empty() ? std::to_string(t.number) : t.text);
      case Tok::String: return "string \"" + t.text + "\"";
      case Tok::Punct: return "'" + t.text + "'";
    }
    return "?";
  }

  Token take() {
    Token t = tok_;
    tok_ = lex_.next();
    return t;
  }
  bool isPunct(const char* p) const { return tok_.kind == Tok::Punct && tok_.text == p; }
  bool isName(const char* n) const { return tok_.kind == Tok::Name && tok_.text == n; }
  bool acceptPunct(const char* p) {
    if (!isPunct(p)) return false;
    take();
    return true;
  }
  void expectPunct(const char* p) {
    if (!isPunct(p)) throw ParseError(std::string("expected '") + p + "', found " + describe(tok_), tok_.loc);
    take();
  }
  void expectKeyword(const char* k) {
    if (!isName(k)) throw ParseError(std::string("expected '") + k + "', found " + describe(tok_), tok_.loc);
    take();
  }
  std::string expectName(const std::string& what) {
    if (tok_.kind != Tok::Name) throw ParseError("expected " + what + ", found " + describe(tok_), tok_.loc);
    return take().text;
  }
  double expectNumber(const std::string& what) {
    bool negative = acceptPunct("-");
    if (tok_.kind != Tok::Number) throw ParseError("expected " + what + " (a number), found " + describe(tok_), tok_.loc);
    double v = take().number;
    return negative ? -v : v;
  }
  int64_t expectInt(const std::string& what) {
    bool negative = acceptPunct("-");
    if (tok_.kind != Tok::Number || !tok_.isInteger)
      throw ParseError("expected " + what + " (an integer), found " + describe(tok_), tok_.loc);
    int64_t v = std::strtoll(take().text.c_str(), nullptr, 10);  // exact: at most 18 digits, no double rounding
    return negative ? -v : v;
  }

  Lexer lex_;
  Token tok_;
  std::string description_;
  int depth_ = 0;
};

}  // namespace

ModelDef parseModel(std::string_view source, const std::string& file) { return Parser(source, file).parseFile(); }

}  // namespace fusebox

#include "core/fuzz/minimizer.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <regex>
#include <set>

namespace fusebox::fuzz {

namespace {

bool wordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

// Whole-word integer literals of `text` (not digits of v12 or of 0.5).
std::vector<int64_t> integerLiterals(const std::string& text) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < text.size();) {
    if (std::isdigit(static_cast<unsigned char>(text[i])) && (i == 0 || !wordChar(text[i - 1]))) {
      size_t j = i;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
      if ((j == text.size() || !wordChar(text[j])) && j - i < 10) out.push_back(std::stoll(text.substr(i, j - i)));
      i = j;
    } else {
      ++i;
    }
  }
  return out;
}

bool usedAfter(const FuzzProgram& p, size_t stmt, const std::string& name) {
  for (size_t i = stmt + 1; i < p.stmts.size(); ++i)
    if (mentionsName(p.stmts[i].text.substr(p.stmts[i].text.find('=') + 1), name)) return true;
  for (const std::string& o : p.outputs)
    if (mentionsName(o, name)) return true;
  return false;
}

bool mentionedAnywhere(const FuzzProgram& p, const std::string& name, const ProgramStmt* except = nullptr) {
  for (const ProgramStmt& s : p.stmts)
    if (&s != except && mentionsName(s.isParam ? "" : s.text.substr(s.text.find('=') + 1), name)) return true;
  for (const std::string& o : p.outputs)
    if (mentionsName(o, name)) return true;
  return false;
}

class Minimizer {
public:
  Minimizer(const FuzzProgram& p, const StillFails& f, const MinimizeOptions& o)
      : best_(p), stillFails_(f), o_(o), deadline_(std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(o.maxSeconds))) {}

  MinimizeResult run() {
    for (bool progress = true; progress && !outOfBudget();) {
      progress = false;
      progress |= dropOutputs();
      progress |= dropStatements();
      progress |= dropUnused();
      progress |= shrinkSizes();
      progress |= simplifyAttributes();
    }
    return {best_, checks_, accepted_};
  }

private:
  bool outOfBudget() const { return checks_ >= o_.maxChecks || std::chrono::steady_clock::now() > deadline_; }

  bool tryCandidate(const FuzzProgram& c) {
    if (outOfBudget()) return false;
    ++checks_;
    if (!stillFails_(c)) return false;
    best_ = c;
    ++accepted_;
    return true;
  }

  bool dropOutputs() {
    bool any = false;
    for (size_t i = best_.outputs.size(); i-- > 0 && best_.outputs.size() > 1;) {
      FuzzProgram c = best_;
      c.outputs.erase(c.outputs.begin() + static_cast<long>(i));
      any |= tryCandidate(c);
    }
    return any;
  }

  // Names a statement could be replaced by: its own operands first, then earlier values.
  std::vector<std::string> replacements(size_t stmt) {
    std::vector<std::string> earlier;
    for (const ProgramInput& in : best_.inputs) earlier.push_back(in.name);
    for (size_t i = 0; i < stmt; ++i)
      if (!best_.stmts[i].isParam) earlier.push_back(best_.stmts[i].name);
    std::vector<std::string> out;
    const std::string rhs = best_.stmts[stmt].text.substr(best_.stmts[stmt].text.find('=') + 1);
    for (const std::string& n : earlier)
      if (mentionsName(rhs, n)) out.push_back(n);
    for (auto it = earlier.rbegin(); it != earlier.rend() && out.size() < 5; ++it)
      if (std::find(out.begin(), out.end(), *it) == out.end()) out.push_back(*it);
    return out;
  }

  bool dropStatements() {
    bool any = false;
    for (size_t i = best_.stmts.size(); i-- > 0;) {
      if (i >= best_.stmts.size() || best_.stmts[i].isParam) continue;
      std::string name = best_.stmts[i].name;
      if (!usedAfter(best_, i, name)) {
        FuzzProgram c = best_;
        c.stmts.erase(c.stmts.begin() + static_cast<long>(i));
        any |= tryCandidate(c);
        continue;
      }
      for (const std::string& r : replacements(i)) {
        FuzzProgram c = best_;
        c.stmts.erase(c.stmts.begin() + static_cast<long>(i));
        for (size_t k = i; k < c.stmts.size(); ++k)
          if (!c.stmts[k].isParam) {
            std::string& t = c.stmts[k].text;
            size_t eq = t.find('=');
            t = t.substr(0, eq + 1) + renameWord(t.substr(eq + 1), name, r);
          }
        for (std::string& o : c.outputs) o = renameWord(o, name, r);
        if (tryCandidate(c)) {
          any = true;
          break;
        }
      }
    }
    return any;
  }

  bool dropUnused() {
    bool any = false;
    for (size_t i = best_.stmts.size(); i-- > 0;)
      if (i < best_.stmts.size() && best_.stmts[i].isParam && !mentionedAnywhere(best_, best_.stmts[i].name)) {
        FuzzProgram c = best_;
        c.stmts.erase(c.stmts.begin() + static_cast<long>(i));
        any |= tryCandidate(c);
      }
    for (size_t i = best_.inputs.size(); i-- > 0;)
      if (i < best_.inputs.size() && !mentionedAnywhere(best_, best_.inputs[i].name)) {
        FuzzProgram c = best_;
        c.inputs.erase(c.inputs.begin() + static_cast<long>(i));
        any |= tryCandidate(c);
      }
    return any;
  }

  // Every whole-word occurrence of size `from` (in types, shape lists and attributes) becomes `to`.
  FuzzProgram withSize(int64_t from, int64_t to) const {
    FuzzProgram c = best_;
    std::string f = std::to_string(from), t = std::to_string(to);
    for (ProgramInput& in : c.inputs) in.type = renameWord(in.type, f, t);
    for (ProgramStmt& s : c.stmts) {
      if (s.isParam) {
        size_t eq = s.text.find('=');  // the type's sizes, not the init's seed
        s.text = renameWord(s.text.substr(0, eq), f, t) + s.text.substr(eq);
      } else {
        s.text = renameWord(s.text, f, t);
      }
    }
    for (std::string& o : c.outputs) o = renameWord(o, f, t);
    return c;
  }

  bool shrinkSizes() {
    std::set<int64_t, std::greater<>> sizes;
    for (const ProgramInput& in : best_.inputs)
      for (int64_t v : integerLiterals(in.type)) sizes.insert(v);
    for (const ProgramStmt& s : best_.stmts)
      if (s.isParam)
        for (int64_t v : integerLiterals(s.text.substr(0, s.text.find('=')))) sizes.insert(v);
    bool any = false;
    for (int64_t n : sizes) {
      if (n <= 1) continue;
      for (int64_t to : {int64_t{1}, int64_t{2}, n / 2}) {
        if (to >= n || to < 1) continue;
        if (tryCandidate(withSize(n, to))) {
          any = true;
          break;
        }
      }
    }
    return any;
  }

  // Keyword attributes dropped (their defaults then apply: keepdim=true, approximate="tanh",
  // training=false, padding=[1]), and float literals made 1.0: what remains is what the failure needs.
  bool simplifyAttributes() {
    static const std::regex keyword(R"(, [a-z_]+=("[^"]*"|\[[^\]]*\]|[^,)]+))");
    static const std::regex literal(R"((^|[^\w.])(-?[0-9]+\.[0-9]+)\b)");
    bool any = false;
    for (size_t i = 0; i < best_.stmts.size(); ++i) {
      if (best_.stmts[i].isParam) continue;
      for (const std::regex* re : {&keyword, &literal}) {
        std::vector<std::pair<size_t, size_t>> spans;
        const std::string text = best_.stmts[i].text;
        size_t rhs = text.find('=') + 1;
        for (auto m = std::sregex_iterator(text.begin() + static_cast<long>(rhs), text.end(), *re); m != std::sregex_iterator(); ++m) {
          size_t group = re == &keyword ? 0 : 2;
          spans.push_back({rhs + static_cast<size_t>(m->position(group)), static_cast<size_t>(m->length(group))});
        }
        // From the last match: a kept change leaves the earlier offsets valid.
        for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
          std::string replaced = re == &keyword ? "" : "1.0";
          if (text.compare(it->first, it->second, replaced) == 0) continue;
          FuzzProgram c = best_;
          c.stmts[i].text.replace(it->first, it->second, replaced);
          any |= tryCandidate(c);
        }
      }
    }
    return any;
  }

  FuzzProgram best_;
  const StillFails& stillFails_;
  MinimizeOptions o_;
  std::chrono::steady_clock::time_point deadline_;
  int checks_ = 0, accepted_ = 0;
};

}  // namespace

MinimizeResult minimizeProgram(const FuzzProgram& failing, const StillFails& stillFails, const MinimizeOptions& options) {
  return Minimizer(failing, stillFails, options).run();
}

}  // namespace fusebox::fuzz

#include "core/codegen/compiled_listing.h"

#include <cstdint>
#include <unordered_map>

namespace fusebox {

const std::vector<ListingKindInfo>& listingKinds() {
  static const std::vector<ListingKindInfo> kinds = {
      {ListingKind::LlvmIr, "llvm_ir", "LLVM IR", "cpp"},
      {ListingKind::Assembly, "asm", "asm", "cpp"},
      {ListingKind::Ptx, "ptx", "PTX", "cuda"},
      {ListingKind::Sass, "sass", "SASS", "cuda"},
  };
  return kinds;
}

const ListingKindInfo* listingKindNamed(std::string_view name) {
  for (const ListingKindInfo& k : listingKinds())
    if (name == k.name) return &k;
  return nullptr;
}

namespace {

std::string_view trimmed(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") + 1 - b);
}

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// The unsigned number at s[at...], skipping blanks first; -1 when there is none. Bounded, so a
// hostile listing's 40-digit "line" is not a line.
int64_t numberAt(std::string_view s, size_t& at) {
  while (at < s.size() && (s[at] == ' ' || s[at] == '\t')) ++at;
  int64_t v = 0;
  size_t start = at;
  for (; at < s.size() && s[at] >= '0' && s[at] <= '9'; ++at)
    if (at - start < 12) v = v * 10 + (s[at] - '0');
  return at == start ? -1 : at - start > 12 ? int64_t{1} << 40 : v;
}

int asLine(int64_t v) { return v > 0 && v < (int64_t{1} << 30) ? static_cast<int>(v) : 0; }

// The value after "line: " in a metadata node ("!DILocation(line: 45, column: 3, ...)").
int metadataLine(std::string_view s) {
  size_t at = s.find("line: ");
  if (at == std::string_view::npos) return 0;
  at += 6;
  return asLine(numberAt(s, at));
}

bool isLabel(std::string_view t) {
  size_t comment = t.find_first_of("#;");
  std::string_view code = trimmed(t.substr(0, comment));
  return !code.empty() && code.back() == ':';
}

template <class Each>
void forEachLine(std::string_view raw, Each each) {
  for (size_t at = 0; at < raw.size();) {
    size_t end = raw.find('\n', at);
    if (end == std::string_view::npos) end = raw.size();
    each(raw.substr(at, end - at));
    at = end + 1;
  }
}

// A location and the ones it was inlined into, innermost first.
using Chain = std::vector<int>;

int ownLine(const Chain& chain, int ownFrom) {
  for (int line : chain)
    if (line > 0 && line >= ownFrom) return line;
  return chain.empty() ? 0 : chain.front();
}

struct Builder {
  CompiledListing out;
  void keep(std::string_view line, int source) {
    out.text.append(line);
    out.text += '\n';
    out.sourceLines.push_back(source);
  }
};

// LLVM IR: "!dbg !12" on an instruction names the metadata node "!12 = !DILocation(line: 45,
// ..., inlinedAt: !13)", the chain of where it was inlined. The DI* nodes themselves are dropped.
CompiledListing readLlvmIr(std::string_view raw, int ownFrom) {
  struct Location {
    int line = 0;
    int64_t inlinedAt = -1;
  };
  std::unordered_map<int64_t, Location> locations;
  forEachLine(raw, [&](std::string_view l) {
    if (l.size() < 2 || l[0] != '!' || l[1] < '0' || l[1] > '9') return;
    size_t at = 1;
    int64_t id = numberAt(l, at);
    if (l.find("!DILocation(") == std::string_view::npos && l.find("!DISubprogram(") == std::string_view::npos) return;
    Location loc{metadataLine(l), -1};
    if (size_t in = l.find("inlinedAt: !"); in != std::string_view::npos) {
      size_t from = in + 12;
      loc.inlinedAt = numberAt(l, from);
    }
    locations[id] = loc;
  });
  std::unordered_map<int64_t, int> lines;
  for (const auto& [id, loc] : locations) {
    Chain chain{loc.line};
    Location outer = loc;
    for (int depth = 0; outer.inlinedAt >= 0 && depth < 64; ++depth) {  // bounded: a hostile file may loop
      auto it = locations.find(outer.inlinedAt);
      if (it == locations.end()) break;
      outer = it->second;
      chain.push_back(outer.line);
    }
    lines[id] = ownLine(chain, ownFrom);
  }
  Builder b;
  forEachLine(raw, [&](std::string_view l) {
    if (startsWith(l, "!llvm.dbg.")) return;
    if (!l.empty() && l[0] == '!') {
      size_t eq = l.find(" = ");
      if (eq != std::string_view::npos) {
        std::string_view value = l.substr(eq + 3);
        if (startsWith(value, "!DI") || startsWith(value, "distinct !DI")) return;
      }
    }
    size_t dbg = l.find("!dbg !");
    if (dbg == std::string_view::npos) return b.keep(l, 0);
    size_t at = dbg + 6;
    int64_t id = numberAt(l, at);
    size_t from = dbg;
    if (from >= 2 && l.substr(from - 2, 2) == ", ") from -= 2;
    else if (from >= 1 && l[from - 1] == ' ') from -= 1;
    std::string line(l.substr(0, from));
    line.append(l.substr(at));
    auto it = lines.find(id);
    b.keep(line, it == lines.end() ? 0 : it->second);
  });
  return b.out;
}

// x86 assembly and PTX: ".loc FILE LINE COL" sets the line of the instructions after it (0:
// compiler-made code of no line). PTX adds ", inlined_at FILE LINE COL" for inlined code (the
// assembly's own locations are chosen by the same rule before it is printed,
// CompiledCpuModule::assembly). Directives, labels and comments are linked to nothing.
CompiledListing readLocListing(std::string_view raw, bool ptx, int ownFrom) {
  Builder b;
  int current = 0;
  bool debugSection = false;
  int braces = 0;  // PTX's .section .debug_* { ... } blocks
  forEachLine(raw, [&](std::string_view l) {
    std::string_view t = trimmed(l);
    if (startsWith(t, ".section") && !(ptx && debugSection)) {
      debugSection = t.find(".debug") != std::string_view::npos;
      braces = 0;
    } else if (!ptx && (startsWith(t, ".text") || startsWith(t, ".data") || startsWith(t, ".bss"))) {
      debugSection = false;
    }
    if (debugSection) {  // assembly's lasts to the next section; PTX's to its closing brace
      for (char c : t) braces += c == '{' ? 1 : c == '}' ? -1 : 0;
      if (ptx && braces <= 0 && t.find('}') != std::string_view::npos) debugSection = false;
      return;
    }
    if (startsWith(t, ".loc") && t.size() > 4 && (t[4] == ' ' || t[4] == '\t')) {
      size_t at = 4;
      numberAt(t, at);  // the file: generated code is one file
      Chain chain{asLine(numberAt(t, at))};
      for (size_t in = t.find("inlined_at "); in != std::string_view::npos && chain.size() < 64; in = t.find("inlined_at ", in + 1)) {
        at = in + 11;
        numberAt(t, at);
        chain.push_back(asLine(numberAt(t, at)));
      }
      current = ownLine(chain, ownFrom);
      return;
    }
    if (startsWith(t, ".file") || startsWith(t, ".Ltmp") || startsWith(t, "$L__tmp") || startsWith(t, ".Lfunc_begin") ||
        startsWith(t, ".cfi_sections"))
      return;  // what only the debug info refers to
    bool code = !t.empty() && t[0] != '.' && t[0] != '#' && t[0] != '/' && t[0] != '{' && t[0] != '}' && !isLabel(t);
    b.keep(l, code ? current : 0);
  });
  return b.out;
}

// nvdisasm -gi: "//## File "x.cu", line 45" (then " inlined at "x.cu", line 60" for each level
// of inlining) before the instructions of that line; instructions are the lines with an address
// comment "/*0040*/".
CompiledListing readSass(std::string_view raw, int ownFrom) {
  Builder b;
  int current = 0;
  forEachLine(raw, [&](std::string_view l) {
    std::string_view t = trimmed(l);
    if (startsWith(t, "//## File")) {
      Chain chain;
      for (size_t at = t.find(", line "); at != std::string_view::npos && chain.size() < 64; at = t.find(", line ", at + 1)) {
        size_t from = at + 7;
        chain.push_back(asLine(numberAt(t, from)));
      }
      current = ownLine(chain, ownFrom);
      return;
    }
    bool instruction = startsWith(t, "/*") && t.size() > 3 && t.find("*/") != std::string_view::npos && t[2] >= '0' && t[2] <= 'f';
    b.keep(l, instruction ? current : 0);
  });
  return b.out;
}

}  // namespace

int ownLinesFrom(const std::vector<int>& kernelFirstLines) {
  int first = 0;
  for (int line : kernelFirstLines)
    if (line > 0 && (first == 0 || line < first)) first = line;
  return first;
}

int ownLinesFrom(const GeneratedModule& m) {
  std::vector<int> firsts;
  for (const KernelLines& k : m.kernels) firsts.push_back(k.firstLine);
  return ownLinesFrom(firsts);
}

CompiledListing readListing(ListingKind kind, std::string_view raw, int ownLinesFrom) {
  CompiledListing l;
  switch (kind) {
    case ListingKind::LlvmIr: l = readLlvmIr(raw, ownLinesFrom); break;
    case ListingKind::Assembly: l = readLocListing(raw, false, ownLinesFrom); break;
    case ListingKind::Ptx: l = readLocListing(raw, true, ownLinesFrom); break;
    case ListingKind::Sass: l = readSass(raw, ownLinesFrom); break;
  }
  if (!raw.empty() && raw.back() != '\n' && !l.text.empty()) l.text.pop_back();  // as it ended
  return l;
}

}  // namespace fusebox

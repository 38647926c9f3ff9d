// The compilers' own listings (LLVM IR, x86 assembly, PTX, SASS) as a person reads them, with
// each line linked to the line of generated source it was compiled from, as Compiler Explorer
// does. The compilers are asked for line tables only (clang -gline-tables-only, NVRTC and ptxas
// -lineinfo); the raw listing is what a session stores, and readListing takes the debug-only
// lines out (.loc, .file, !DILocation, the .debug_* sections) and keeps their line numbers.
// Code inlined from a helper of the prelude links to the kernel line that called it (a person
// reading a kernel wants its exp's instructions on the line that calls fb_exp): of the chain of
// locations from the innermost out, the first at or below `ownLinesFrom` (the first kernel's
// first line; 0: the innermost, as Compiler Explorer links).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/codegen/generated_module.h"

namespace fusebox {

enum class ListingKind { LlvmIr, Assembly, Ptx, Sass };

struct ListingKindInfo {
  ListingKind kind;
  const char* name;            // the artifact's name in a session and in `dump --stage`: "llvm_ir"
  const char* title;           // its tab's title: "LLVM IR"
  const char* sourceLanguage;  // the language of the source it links to: "cpp", "cuda"
};

const std::vector<ListingKindInfo>& listingKinds();
// The listing an artifact name stands for; none for sources ("cpp", "cuda") and anything else.
const ListingKindInfo* listingKindNamed(std::string_view name);

struct CompiledListing {
  std::string text;              // without the lines that only carry debug information
  std::vector<int> sourceLines;  // per line of `text`: its generated-source line (1-based), 0 when none
};

// Never throws: lines it does not recognize are kept as they are, unlinked.
CompiledListing readListing(ListingKind kind, std::string_view raw, int ownLinesFrom = 0);

// The first line of a module's first kernel (0 when it has none): the lines above it are the
// prelude's helpers.
int ownLinesFrom(const std::vector<int>& kernelFirstLines);
int ownLinesFrom(const GeneratedModule& m);

}  // namespace fusebox

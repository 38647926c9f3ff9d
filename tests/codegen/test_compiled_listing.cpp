// Compiled listings linked to their source lines (core/codegen/compiled_listing): the compilers'
// real output for a built-in model (clang's LLVM IR and assembly always; NVRTC's PTX where the
// toolkit is), each linked line pointing at a source line that computes what the instruction
// does; nvdisasm's SASS format from a listing the H200 machine printed; hostile text.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "core/codegen/compiled_listing.h"
#include "core/codegen/cpu/jit_compiler.h"
#include "core/codegen/cuda/nvrtc_compiler.h"
#include "core/frontend/model_loader.h"
#include "core/pipeline/pipeline.h"

using namespace fusebox;

namespace {

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

const GeneratedModule& forwardModule(Pipeline& p) {
  p.runUntil(Stage::Codegen);
  return p.modules().front();
}

// Every linked line of `listing` points into the source, the text keeps no debug-only line, and
// each kernel of the source has instructions linked into its lines.
void expectLinkedToKernels(const CompiledListing& l, const GeneratedModule& m, const std::vector<std::string>& debugOnly) {
  std::vector<std::string> lines = linesOf(l.text), source = linesOf(m.source);
  ASSERT_EQ(lines.size(), l.sourceLines.size());
  for (const std::string& d : debugOnly) EXPECT_EQ(l.text.find(d), std::string::npos) << d;
  int linked = 0;
  for (int s : l.sourceLines) {
    EXPECT_GE(s, 0);
    EXPECT_LE(s, static_cast<int>(source.size()));
    linked += s > 0;
  }
  EXPECT_GT(linked, static_cast<int>(lines.size()) / 4) << "most instructions carry a line";
  for (const auto& k : m.kernels) {
    if (m.target == "cuda" && k.name.rfind("kernel", 0) != 0) continue;  // cuBLAS calls: host code, no PTX
    bool any = std::any_of(l.sourceLines.begin(), l.sourceLines.end(), [&](int s) { return s >= k.firstLine && s <= k.lastLine; });
    EXPECT_TRUE(any) << k.name << " (lines " << k.firstLine << "-" << k.lastLine << ") has no linked instruction";
  }
}

// The listing's lines linked to the first line of a kernel holding `code`, joined.
std::string compiledFrom(const CompiledListing& l, const GeneratedModule& m, const std::string& code) {
  std::vector<std::string> lines = linesOf(l.text), source = linesOf(m.source);
  int at = 0;
  for (const auto& k : m.kernels)
    for (int s = k.firstLine; s >= 1 && s <= k.lastLine && !at; ++s)
      if (source[static_cast<size_t>(s - 1)].find(code) != std::string::npos) at = s;
  EXPECT_GT(at, 0) << "no kernel line holds " << code;
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i)
    if (l.sourceLines[i] == at) out += lines[i] + "\n";
  return out;
}

}  // namespace

TEST(CompiledListing, KindsAreATable) {
  for (const ListingKindInfo& k : listingKinds()) EXPECT_EQ(listingKindNamed(k.name), &k);
  EXPECT_EQ(listingKindNamed("cpp"), nullptr);
  EXPECT_EQ(listingKindNamed("cuda"), nullptr);
  EXPECT_EQ(listingKindNamed("llvm"), nullptr);
}

TEST(CompiledListing, ClangIrAndAssemblyLinkToTheCppLines) {
  if (!cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  Pipeline p(loadModel("mlp"), PipelineConfig{});
  const GeneratedModule& m = forwardModule(p);
  auto compiled = compileCpuModule(m.source);
  CompiledListing ir = readListing(ListingKind::LlvmIr, compiled->llvmIR, ownLinesFrom(m));
  expectLinkedToKernels(ir, m, {"!dbg", "!DILocation", "!DISubprogram", "!llvm.dbg.cu"});
  CompiledListing as = readListing(ListingKind::Assembly, compiled->assembly(ownLinesFrom(m)), ownLinesFrom(m));
  expectLinkedToKernels(as, m, {"\t.loc\t", "\t.file\t", ".debug_info", ".debug_abbrev", ".Ltmp"});
  // the relu's max (fb_max, a prelude helper inlined into the kernel) compiles on the kernel
  // line that calls it; the bias add on the line that adds
  EXPECT_NE(compiledFrom(ir, m, "fb_max(t2, 0.0f)").find("select"), std::string::npos);
  EXPECT_NE(compiledFrom(as, m, "fb_max(t2, 0.0f)").find("vmaxps"), std::string::npos);
  EXPECT_NE(compiledFrom(ir, m, " = t0 + t1;").find("fadd"), std::string::npos);
  EXPECT_NE(compiledFrom(as, m, " = t0 + t1;").find("vaddps"), std::string::npos);
  // without the boundary, the max is on the helper's own line, above every kernel
  CompiledListing inner = readListing(ListingKind::LlvmIr, compiled->llvmIR);
  EXPECT_EQ(compiledFrom(inner, m, "fb_max(t2, 0.0f)").find("select"), std::string::npos);
}

TEST(CompiledListing, PtxLinksToTheCudaLines) {
  if (!nvrtcAvailable()) GTEST_SKIP() << "NVRTC not available (no CUDA toolkit on this machine)";
  PipelineConfig config;
  config.target = "cuda";
  Pipeline p(loadModel("mlp"), config);
  const GeneratedModule& m = forwardModule(p);
  auto compiled = compileCudaModule(m.source, 90);
  CompiledListing ptx = readListing(ListingKind::Ptx, compiled->ptx, ownLinesFrom(m));
  expectLinkedToKernels(ptx, m, {"\t.loc\t", "\t.file\t", "$L__tmp", ".debug_"});
  EXPECT_NE(compiledFrom(ptx, m, " = t0 + t1;").find("add.rn.f32"), std::string::npos);
  EXPECT_NE(compiledFrom(ptx, m, "fb_max(t2, 0.0f)").find("selp.f32"), std::string::npos);
}

// Lines as nvdisasm -c -gi prints them (sm_90, CUDA 13 on the H200 machine), cut down.
TEST(CompiledListing, SassLinesFollowNvdisasmsFileMarkers) {
  std::string sass =
      "// SASS for sm_90 (ptxas, then nvdisasm)\n"
      "\t.text.kernel0:\n"
      "        /*0000*/                   LDC R1, c[0x0][0x28] ;\n"
      "\t//## File \"fusebox_kernels.cu\", line 41\n"
      "        /*0010*/                   S2R R0, SR_TID.X ;\n"
      "        /*0020*/                   S2UR UR4, SR_CTAID.X ;\n"
      "\t//## File \"fusebox_kernels.cu\", line 44 inlined at \"fusebox_kernels.cu\", line 60\n"
      "        /*0030*/                   FADD R5, R2, R3 ;\n"
      ".L_x_0:\n"
      "        /*0040*/                   EXIT ;\n";
  CompiledListing l = readListing(ListingKind::Sass, sass);
  std::vector<std::string> lines = linesOf(l.text);
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_EQ(l.text.find("//##"), std::string::npos);
  EXPECT_EQ(l.sourceLines, (std::vector<int>{0, 0, 0, 41, 41, 44, 0, 44}));
  // with the kernels' own code from line 50 on, the inlined line links to its caller
  EXPECT_EQ(readListing(ListingKind::Sass, sass, 50).sourceLines, (std::vector<int>{0, 0, 0, 41, 41, 60, 0, 60}));
}

TEST(CompiledListing, IrFollowsTheInlinedAtChainAndKeepsOtherMetadata) {
  std::string ir =
      "define void @k(ptr %a) local_unnamed_addr #0 !dbg !8 {\n"
      "entry:\n"
      "  %x = load float, ptr %a, align 4, !dbg !10\n"
      "  %y = fadd float %x, 1.0, !dbg !11\n"
      "  ret void, !dbg !10\n"
      "}\n"
      "!llvm.dbg.cu = !{!0}\n"
      "!llvm.module.flags = !{!2}\n"
      "!0 = distinct !DICompileUnit(language: DW_LANG_C_plus_plus_14, file: !1, emissionKind: LineTablesOnly)\n"
      "!2 = !{i32 2, !\"Debug Info Version\", i32 3}\n"
      "!8 = distinct !DISubprogram(name: \"k\", scope: !1, file: !1, line: 30, type: !9, spFlags: DISPFlagDefinition)\n"
      "!10 = !DILocation(line: 31, column: 5, scope: !8)\n"
      "!11 = !DILocation(line: 7, column: 10, scope: !12, inlinedAt: !13)\n"
      "!13 = distinct !DILocation(line: 33, column: 2, scope: !8)\n";
  CompiledListing l = readListing(ListingKind::LlvmIr, ir);
  std::vector<std::string> lines = linesOf(l.text);
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_EQ(lines[0], "define void @k(ptr %a) local_unnamed_addr #0 {");
  EXPECT_EQ(lines[3], "  %y = fadd float %x, 1.0");
  EXPECT_EQ(lines[7], "!2 = !{i32 2, !\"Debug Info Version\", i32 3}");
  EXPECT_EQ(l.sourceLines, (std::vector<int>{30, 0, 31, 7, 31, 0, 0, 0}));
  EXPECT_EQ(readListing(ListingKind::LlvmIr, ir, 20).sourceLines, (std::vector<int>{30, 0, 31, 33, 31, 0, 0, 0}));
}

// Text from a session file is anything: no crash, nothing linked that is not a line number.
TEST(CompiledListing, HostileTextIsKeptUnlinked) {
  std::string junk = "\t.loc\t1 99999999999999999999 3\n  movl %eax, %ebx\n\t.loc\n\t.loc 1 -5\n  nop\n!dbg !\n  x !dbg !999999999999\n"
                     "//## File \"a\", line 4294967297\n/*0010*/ X ;\n.section .debug_str {\n";
  junk += std::string(3, '\0') + "\n";
  for (const ListingKindInfo& k : listingKinds()) {
    CompiledListing l = readListing(k.kind, junk);
    EXPECT_EQ(linesOf(l.text).size(), l.sourceLines.size()) << k.name;
    for (int s : l.sourceLines) EXPECT_TRUE(s == 0) << k.name << ": " << s;
  }
  EXPECT_TRUE(readListing(ListingKind::Assembly, "").text.empty());
  // an inlinedAt chain that loops ends, at the innermost line
  CompiledListing cycle = readListing(ListingKind::LlvmIr, "  ret void, !dbg !1\n!1 = !DILocation(line: 5, column: 1, scope: !2, inlinedAt: !1)\n", 10);
  EXPECT_EQ(cycle.sourceLines, (std::vector<int>{5}));
}

// On an AVX-512 host every module is compiled for 512-bit vectors: LLVM's tuning for Intel's
// AVX-512 CPUs prefers 256 bits and split the prelude's 16-lane vectors in halves (spilling the
// direct convolution's accumulators), so the kernels' loops must come out in zmm registers.
TEST(CompiledListing, AvxHostsVectorizeAtFullWidth) {
  if (!cpuJitAvailable()) GTEST_SKIP() << "built without LLVM";
  if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "the host has no AVX-512";
  Pipeline p(loadModel("mlp"), PipelineConfig{});
  const GeneratedModule& m = forwardModule(p);
  auto compiled = compileCpuModule(m.source);
  CompiledListing as = readListing(ListingKind::Assembly, compiled->assembly(ownLinesFrom(m)), ownLinesFrom(m));
  EXPECT_NE(compiledFrom(as, m, "fb_max(t2, 0.0f)").find("zmm"), std::string::npos);
}

#include "core/codegen/cpu/jit_compiler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "core/codegen/cpu/cpu_prelude.h"
#include "core/codegen/cpu/object_cache.h"
#include "core/codegen/libm_helpers.h"
#include "core/ir/error.h"

#ifdef FUSEBOX_HAS_LLVM
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Lex/PreprocessorOptions.h>
#include <llvm/CodeGen/ParallelCG.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/VirtualFileSystem.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/Transforms/Utils/Cloning.h>
#endif

namespace fusebox {

namespace {

std::string hashOf(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001B3ull;
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

#ifdef FUSEBOX_HAS_LLVM

namespace {

struct JitState {
  std::mutex mutex;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<llvm::TargetMachine> objectEmitter;  // the JIT's own target, to make object files we can keep
  CompiledObjectCache disk{CompiledObjectCache::defaultDirectory()};
  std::map<std::string, std::shared_ptr<CompiledCpuModule>> cache;
  int modules = 0;
  std::optional<std::string> runtimeLibrary;  // its object, linked into every module's dylib
};

JitState& state() {
  static JitState s;
  return s;
}

// The process symbols generated code may call: the libm functions the prelude declares, BLAS, and
// what LLVM itself emits calls to. Nothing else of the process (system, fopen, ...) is reachable.
bool allowedProcessSymbol(llvm::StringRef name) {
  static const std::set<std::string> allowed = [] {
    std::set<std::string> s = {
      "expf", "logf", "tanhf", "erff", "powf", "sinf", "cosf", "atanf", "exp", "log", "tanh", "erf", "pow", "sin", "cos",
      "atan", "cblas_sgemm", "memcpy", "memset", "memmove", "fmodf", "fmod", "floorf", "floor", "sqrtf", "sqrt", "rintf",
      "rint", "__powisf2", "__powidf2", "exp2f", "exp2", "log2f", "log2", "expm1f", "expm1", "log1pf", "log1p", "exp10f",
      "exp10", "sincosf", "sincos", "ldexpf", "ldexp", "roundf", "round", "truncf", "trunc", "ceilf", "ceil", "fabsf", "fabs",
      "fmaf", "fma", "tanf", "tan", "atan2f", "atan2", "coshf", "cosh", "sinhf", "sinh"};
    for (const std::string& f : tableLibmSymbols()) s.insert(f);  // the op tables' libm calls
    return s;
  }();
  return allowed.count(name.str()) > 0;
}

std::string hostCpu() {
  std::string cpu = llvm::sys::getHostCPUName().str();
  return cpu == "generic" ? "x86-64" : cpu;  // an unrecognized host: the feature list carries AVX etc.
}

// The host target at -O3: the JIT's, and the one that emits the objects it links (and caches).
llvm::orc::JITTargetMachineBuilder hostTarget() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::InitializeNativeTargetAsmParser();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) throw Error("LLVM: cannot detect the host target: " + llvm::toString(jtmb.takeError()));
  jtmb->setCodeGenOptLevel(llvm::CodeGenOpt::Aggressive);
  return std::move(*jtmb);
}

std::unique_ptr<llvm::orc::LLJIT> makeJit() {
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(hostTarget()).create();
  if (!jit) throw Error("LLVM: cannot create the JIT: " + llvm::toString(jit.takeError()));
  auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix(), [](const llvm::orc::SymbolStringPtr& s) { return allowedProcessSymbol(*s); });
  if (!gen) throw Error("LLVM: cannot expose process symbols: " + llvm::toString(gen.takeError()));
  (*jit)->getMainJITDylib().addGenerator(std::move(*gen));
  return std::move(*jit);
}

// The elementwise libm functions the prelude declares compile as opaque calls, as the clang
// driver's -fmath-errno leaves them: otherwise the loop vectorizer "vectorizes" loops calling
// them by scalarizing every call, which made clang 3x slower on long kernels (10,000
// sin/cos/tanh ops: 28 s instead of 10 s) for no speed at run time. logf/log stay builtins: they
// are per-row (a log-sum-exp) in loops that must still vectorize; float exp/tanh/erf are the
// prelude's own; sqrt, floor and fabs are builtins that vectorize.
const char* const kOpaqueLibmCalls[] = {"sinf", "cosf", "atanf", "powf", "exp", "tanh", "erf", "pow", "sin", "cos", "atan"};

std::string emitAssembly(const llvm::Module& m, int ownLinesFrom) {
  std::string error;
  std::string triple = m.getTargetTriple();
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) return "; no assembly: " + error;
  llvm::StringMap<bool> features;
  std::string featureStr;
  if (llvm::sys::getHostCPUFeatures(features))
    for (auto& f : features) featureStr += (featureStr.empty() ? "" : ",") + std::string(f.second ? "+" : "-") + f.first().str();
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(triple, hostCpu(), featureStr, {},
                                                                      llvm::Reloc::PIC_, std::nullopt,
                                                                      llvm::CodeGenOpt::Aggressive));
  std::unique_ptr<llvm::Module> clone = llvm::CloneModule(m);
  clone->setDataLayout(tm->createDataLayout());
  // A .loc line names one line, not the chain of where code was inlined: for code inlined from a
  // prelude helper, the first location out that is the kernels' own code, as readListing links
  // the IR. Locations only: the code is the same.
  for (llvm::Function& f : *clone)
    for (llvm::BasicBlock& b : f)
      for (llvm::Instruction& i : b) {
        const llvm::DILocation* loc = i.getDebugLoc().get();
        if (!loc || !loc->getInlinedAt() || static_cast<int>(loc->getLine()) >= ownLinesFrom) continue;
        const llvm::DILocation* own = loc;
        while (own->getInlinedAt() && static_cast<int>(own->getLine()) < ownLinesFrom) own = own->getInlinedAt();
        if (static_cast<int>(own->getLine()) >= ownLinesFrom) i.setDebugLoc(llvm::DebugLoc(own));
      }
  llvm::SmallString<0> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_AssemblyFile)) return "; no assembly: target cannot emit it";
  pm.run(*clone);
  return std::string(out.str());
}

}  // namespace

bool cpuJitAvailable() { return true; }

struct CompiledCpuModule::LazyAssembly {
  std::mutex mutex;
  std::map<int, std::string> text;  // by ownLinesFrom (one value per source in practice)
};

std::string CompiledCpuModule::assembly(int ownLinesFrom) const {
  if (!lazyAssembly) return "; no assembly";
  std::lock_guard<std::mutex> lock(lazyAssembly->mutex);
  auto it = lazyAssembly->text.find(ownLinesFrom);
  if (it != lazyAssembly->text.end()) return it->second;
  llvm::LLVMContext context;
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> m = llvm::parseIR(llvm::MemoryBufferRef(llvmIR, "module"), error, context);
  return lazyAssembly->text[ownLinesFrom] = m ? emitAssembly(*m, ownLinesFrom) : "; no assembly: " + error.getMessage().str();
}

namespace {

// The clang arguments for a generated source (its in-memory file name last).
enum class Unrolling { On, Off };

std::vector<std::string> clangArguments(const std::string& fileName, Unrolling unrolling) {
  // No -mreassociate, -freciprocal-math or cross-statement FMA contraction (-ffp-contract=on fuses
  // only within one C expression, i.e. one loop-IR op): LLVM would rewrite an expression differently
  // depending on its other uses, so a value recomputed in two kernels could differ in the last bit
  // and an eq against a saved max no longer hold (the gradient of a tied amin was inf). Sums opt in
  // per accumulation (kReassociatePragma) so they still vectorize. -w: warnings about generated code
  // are no use to anyone and were printed as "N warnings generated." on stderr. Line tables only
  // (-gline-tables-only): the IR and assembly listings link each line to its C++ line
  // (core/codegen/compiled_listing); debug info does not change the code LLVM makes.
  std::vector<std::string> args = {"-x", "c++", "-std=c++17", "-O3", "-w", "-ffp-contract=on", "-fno-signed-zeros",
                                   "-debug-info-kind=line-tables-only", "-dwarf-version=5",
                                   "-fno-rtti", "-triple", llvm::sys::getProcessTriple(),
                                   "-target-cpu", hostCpu(), "-vectorize-loops", "-vectorize-slp", "-nostdsysteminc",
                                   "-nobuiltininc"};
  for (const char* f : kOpaqueLibmCalls) args.push_back(std::string("-fno-builtin-") + f);
  for (const std::string& f : tableLibmSymbols()) args.push_back("-fno-builtin-" + f);
  llvm::StringMap<bool> features;
  if (llvm::sys::getHostCPUFeatures(features))
    for (auto& f : features)
      if (f.second) args.insert(args.end(), {"-target-feature", "+" + f.first().str()});
  // LLVM tunes Intel's AVX-512 CPUs (skylake-avx512 .. sapphirerapids) for 256-bit vectors, and
  // then splits the prelude's explicit 16-lane vectors into ymm halves: a direct convolution's 24
  // accumulators became 48 registers and spilled (a 3x3 convolution at 79 GFLOP/s instead of 200
  // on one Xeon core; mobilenet_v2 2.2x slower). AMD's Zen 4/5 were already 512-bit.
  if (features.lookup("avx512f")) args.push_back("-mprefer-vector-width=512");
  // Kernels: no loop unrolling (the vectorizer still interleaves): a quarter to half of clang's
  // time, for ~2% of run time on mobilenet_v2/efficientnet_b0 (measured). The runtime library,
  // compiled once, keeps it (its tap loops).
  if (unrolling == Unrolling::Off) args.push_back("-fno-unroll-loops");
  args.push_back(fileName);
  return args;
}

// The on-disk key: everything the object depends on -- the compiler, its arguments (target CPU and
// features included) and the source.
std::string diskKey(const std::vector<std::string>& args, const std::string& source) {
  llvm::SHA256 sha;
  sha.update("fusebox cpu object 1\n" LLVM_VERSION_STRING "\n");
  for (const std::string& a : args) {
    sha.update(a);
    sha.update(llvm::StringRef("\0", 1));
  }
  sha.update(source);
  std::string key;
  for (uint8_t byte : sha.final()) {
    static const char* hex = "0123456789abcdef";
    key += hex[byte >> 4];
    key += hex[byte & 15];
  }
  return key;
}

// clang, in process, on a file system holding the generated source and nothing else: no #include
// can read a file, and diagnostics can only quote the generated source. Returns the optimized module.
std::unique_ptr<llvm::Module> compileToIR(const std::string& source, const std::vector<std::string>& argStore, llvm::LLVMContext& context) {
  std::vector<const char*> args;
  for (const std::string& a : argStore) args.push_back(a.c_str());
  std::string diagText;
  llvm::raw_string_ostream diagStream(diagText);
  auto diagOpts = llvm::makeIntrusiveRefCnt<clang::DiagnosticOptions>();
  auto* printer = new clang::TextDiagnosticPrinter(diagStream, diagOpts.get());
  clang::DiagnosticsEngine diags(llvm::makeIntrusiveRefCnt<clang::DiagnosticIDs>(), diagOpts, printer);
  auto invocation = std::make_shared<clang::CompilerInvocation>();
  if (!clang::CompilerInvocation::CreateFromArgs(*invocation, args, diags))
    throw Error("clang: bad compiler arguments: " + diagStream.str());
  auto files = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  files->setCurrentWorkingDirectory("/");
  files->addFile("/" + argStore.back(), 0, llvm::MemoryBuffer::getMemBufferCopy(source));
  clang::CompilerInstance ci;
  ci.setInvocation(invocation);
  ci.createDiagnostics(printer, false);
  ci.createFileManager(files);
  clang::EmitLLVMOnlyAction action(&context);
  if (!ci.ExecuteAction(action)) throw Error("generated C++ does not compile:\n" + diagStream.str());
  std::unique_ptr<llvm::Module> module = action.takeModule();
  if (!module) throw Error("clang produced no module:\n" + diagStream.str());
  const std::vector<std::string>& library = cpuRuntimeLibrarySymbols();
  for (const llvm::Function& f : module->functions())
    if (f.isDeclaration() && !f.isIntrinsic() && !allowedProcessSymbol(f.getName()) &&
        std::find(library.begin(), library.end(), f.getName().str()) == library.end())
      throw Error("generated C++ calls '" + f.getName().str() + "', which generated code may not call");
  return module;
}

std::string emitObject(llvm::TargetMachine& tm, llvm::Module& m) {
  m.setDataLayout(tm.createDataLayout());
  llvm::SmallString<0> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_ObjectFile)) throw Error("LLVM: the host target cannot emit object files");
  pm.run(m);
  return std::string(out.str());
}

// A large module's machine code is generated in parallel, one partition per core (LLVM's
// splitCodeGen, as LTO does): linked together the partitions are the module. Small ones stay whole:
// splitting costs a bitcode round trip per partition.
constexpr size_t kInstructionsPerPartition = 1500;
constexpr const char kPartsMagic[] = "FBPARTS1";  // several objects in one cache entry (an ELF starts \x7fELF)

std::vector<std::string> emitObjects(JitState& st, llvm::Module& m) {
  size_t instructions = m.getInstructionCount();
  size_t parts = std::min<size_t>({std::max(1u, std::thread::hardware_concurrency()), 8, instructions / kInstructionsPerPartition});
  if (parts <= 1) return {emitObject(*st.objectEmitter, m)};
  m.setDataLayout(st.objectEmitter->createDataLayout());
  std::vector<llvm::SmallString<0>> out(parts);
  std::vector<std::unique_ptr<llvm::raw_svector_ostream>> streams;
  std::vector<llvm::raw_pwrite_stream*> sinks;
  for (auto& o : out) {
    streams.push_back(std::make_unique<llvm::raw_svector_ostream>(o));
    sinks.push_back(streams.back().get());
  }
  std::mutex made;
  llvm::orc::JITTargetMachineBuilder builder = hostTarget();
  llvm::splitCodeGen(m, sinks, {}, [&]() -> std::unique_ptr<llvm::TargetMachine> {
    std::lock_guard<std::mutex> lock(made);
    auto tm = builder.createTargetMachine();
    if (!tm) llvm::report_fatal_error(tm.takeError());  // the same target the JIT was made with: cannot fail here
    return std::move(*tm);
  });
  std::vector<std::string> objects;
  for (auto& o : out) objects.emplace_back(o.str());
  return objects;
}

std::string packObjects(const std::vector<std::string>& objects) {
  if (objects.size() == 1) return objects[0];
  std::string packed = kPartsMagic;
  auto put = [&](uint64_t v) { packed.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(objects.size());
  for (const std::string& o : objects) put(o.size());
  for (const std::string& o : objects) packed += o;
  return packed;
}

// The objects of a cache entry; none when it is malformed (then it is compiled again).
std::vector<std::string> unpackObjects(const std::string& packed) {
  const size_t magic = sizeof kPartsMagic - 1;
  if (packed.compare(0, magic, kPartsMagic) != 0) return {packed};
  size_t at = magic;
  auto get = [&](uint64_t& v) {
    if (packed.size() - at < sizeof v) return false;
    std::memcpy(&v, packed.data() + at, sizeof v);
    at += sizeof v;
    return true;
  };
  uint64_t count = 0;
  if (!get(count) || count == 0 || count > 64) return {};
  std::vector<uint64_t> sizes(count);
  for (uint64_t& n : sizes)
    if (!get(n)) return {};
  std::vector<std::string> objects;
  for (uint64_t n : sizes) {
    if (packed.size() - at < n) return {};
    objects.push_back(packed.substr(at, n));
    at += n;
  }
  return at == packed.size() ? objects : std::vector<std::string>{};
}

// The runtime library's object (the externs' bodies, cpuRuntimeLibrary): from the disk cache, or
// compiled once per process when the cache is off or does not have it.
void loadRuntimeLibrary(JitState& st) {
  if (st.runtimeLibrary) return;
  std::vector<std::string> args = clangArguments("fusebox_runtime.cpp", Unrolling::On);
  std::string key = diskKey(args, cpuRuntimeLibrary());
  std::optional<CachedObject> cached = st.disk.load(key);
  if (!cached) {
    llvm::LLVMContext context;
    std::unique_ptr<llvm::Module> module = compileToIR(cpuRuntimeLibrary(), args, context);
    cached = CachedObject{emitObject(*st.objectEmitter, *module), ""};
    st.disk.store(key, *cached);
  }
  st.runtimeLibrary = std::move(cached->object);
}

// Links an object, beside a copy of the runtime library, into a dylib of its own (kernel names may
// repeat across modules; the library's reference to fusebox_fault finds this module's) and finds
// the entry points. Addresses: `entry` and `fault` of `result`.
void linkObjects(JitState& st, const std::vector<std::string>& objects, CompiledCpuModule& result) {
  std::string dylibName = "module" + std::to_string(st.modules++);
  auto dylib = st.jit->createJITDylib(dylibName);
  if (!dylib) throw Error("LLVM: " + llvm::toString(dylib.takeError()));
  dylib->addToLinkOrder(st.jit->getMainJITDylib());
  if (auto err = st.jit->addObjectFile(*dylib, llvm::MemoryBuffer::getMemBufferCopy(*st.runtimeLibrary, dylibName + ".runtime")))
    throw Error("LLVM: cannot add the runtime library: " + llvm::toString(std::move(err)));
  for (size_t i = 0; i < objects.size(); ++i)
    if (auto err = st.jit->addObjectFile(*dylib, llvm::MemoryBuffer::getMemBufferCopy(objects[i], dylibName + "." + std::to_string(i))))
      throw Error("LLVM: cannot add the module: " + llvm::toString(std::move(err)));
  auto sym = st.jit->lookup(*dylib, "fusebox_main");
  if (!sym) throw Error("LLVM: fusebox_main not found: " + llvm::toString(sym.takeError()));
  result.entry = sym->toPtr<void*>();
  auto fault = st.jit->lookup(*dylib, "fusebox_fault");
  if (!fault) throw Error("LLVM: fusebox_fault not found: " + llvm::toString(fault.takeError()));
  result.fault = fault->toPtr<long*>();
}

}  // namespace

std::shared_ptr<const CompiledCpuModule> compileCpuModule(const std::string& source) {
  JitState& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  std::string hash = hashOf(source);
  if (auto it = st.cache.find(hash); it != st.cache.end()) {
    auto hit = std::make_shared<CompiledCpuModule>(*it->second);
    hit->fromCache = true;
    return hit;
  }
  auto t0 = std::chrono::steady_clock::now();
  if (!st.jit) {
    st.jit = makeJit();
    auto tm = hostTarget().createTargetMachine();
    if (!tm) throw Error("LLVM: cannot create the host target: " + llvm::toString(tm.takeError()));
    st.objectEmitter = std::move(*tm);
  }
  loadRuntimeLibrary(st);  // counted in this module's compile time when it had to be compiled
  std::vector<std::string> args = clangArguments("fusebox_" + hash + ".cpp", Unrolling::Off);
  std::string key = diskKey(args, source);

  auto result = std::make_shared<CompiledCpuModule>();
  result->sourceHash = hash;
  result->lazyAssembly = std::make_shared<CompiledCpuModule::LazyAssembly>();
  std::optional<CachedObject> cached = st.disk.load(key);
  std::vector<std::string> objects;
  if (cached) objects = unpackObjects(cached->object);
  if (!objects.empty()) {
    result->llvmIR = std::move(cached->llvmIR);
    result->fromCache = true;
  } else {
    llvm::LLVMContext context;
    std::unique_ptr<llvm::Module> module = compileToIR(source, args, context);
    llvm::raw_string_ostream irStream(result->llvmIR);
    module->print(irStream, nullptr);
    irStream.flush();
    objects = emitObjects(st, *module);
    st.disk.store(key, CachedObject{packObjects(objects), result->llvmIR});
  }
  linkObjects(st, objects, *result);
  result->compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  st.cache[hash] = result;
  return result;
}

#else

bool cpuJitAvailable() { return false; }

struct CompiledCpuModule::LazyAssembly {};
std::string CompiledCpuModule::assembly(int) const { return "; no assembly: built without LLVM"; }

std::shared_ptr<const CompiledCpuModule> compileCpuModule(const std::string& source) {
  throw Error("this build has no CPU backend: configure with LLVM 16 and libclang-cpp 16 (FUSEBOX_WITH_LLVM=ON); source hash " +
              hashOf(source));
}

#endif

}  // namespace fusebox

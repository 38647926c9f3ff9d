#include "core/codegen/cuda/nvrtc_compiler.h"

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <vector>

#include "core/ir/error.h"

namespace fusebox {

#ifdef FUSEBOX_HAS_NVRTC

namespace {

// NVRTC is opened at run time, like the driver: a package built with the CUDA backend installs and
// runs where no CUDA toolkit is present (the CUDA target then reports NVRTC missing).
using nvrtcProgram = struct NvrtcProgram*;
using nvrtcResult = int;
constexpr nvrtcResult NVRTC_SUCCESS = 0;

struct Nvrtc {
  void* lib = nullptr;
  const char* (*nvrtcGetErrorString)(nvrtcResult);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t*);  // null before CUDA 11.1
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram*);
  bool ok = false;
};

template <class F>
bool resolve(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}

const Nvrtc& nvrtc() {
  static const Nvrtc n = [] {
    Nvrtc n{};
    for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so.13",
                             "/usr/local/cuda/lib64/libnvrtc.so.12", "/usr/local/cuda/lib64/libnvrtc.so"})
      if ((n.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    n.ok = n.lib && resolve(n.lib, "nvrtcGetErrorString", n.nvrtcGetErrorString) &&
           resolve(n.lib, "nvrtcCreateProgram", n.nvrtcCreateProgram) && resolve(n.lib, "nvrtcCompileProgram", n.nvrtcCompileProgram) &&
           resolve(n.lib, "nvrtcGetProgramLogSize", n.nvrtcGetProgramLogSize) &&
           resolve(n.lib, "nvrtcGetProgramLog", n.nvrtcGetProgramLog) && resolve(n.lib, "nvrtcGetPTXSize", n.nvrtcGetPTXSize) &&
           resolve(n.lib, "nvrtcGetPTX", n.nvrtcGetPTX) && resolve(n.lib, "nvrtcDestroyProgram", n.nvrtcDestroyProgram);
    if (n.ok && !(resolve(n.lib, "nvrtcGetCUBINSize", n.nvrtcGetCUBINSize) && resolve(n.lib, "nvrtcGetCUBIN", n.nvrtcGetCUBIN)))
      n.nvrtcGetCUBINSize = nullptr, n.nvrtcGetCUBIN = nullptr;
    return n;
  }();
  return n;
}

}  // namespace

bool nvrtcAvailable() { return nvrtc().ok; }

std::shared_ptr<const CompiledCudaModule> compileCudaModule(const std::string& source, int cc, CudaOutput output) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<CompiledCudaModule>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  if (output == CudaOutput::PtxAndCubin && !nvrtc().nvrtcGetCUBIN) output = CudaOutput::Ptx;  // the driver JITs the PTX instead
  // sm_XX: NVRTC runs ptxas too, so the driver loads machine code instead of compiling PTX at load
  std::string arch = (output == CudaOutput::PtxAndCubin ? "sm_" : "compute_") + std::to_string(cc);
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : source) h = (h ^ c) * 0x100000001B3ull;
  std::string key = arch + ":" + std::to_string(h);
  if (auto it = cache.find(key); it != cache.end()) {
    auto hit = std::make_shared<CompiledCudaModule>(*it->second);
    hit->fromCache = true;
    return hit;
  }
  const Nvrtc& nv = nvrtc();
  if (!nv.ok) throw Error("NVRTC not found (libnvrtc.so from the CUDA Toolkit, or /usr/local/cuda/lib64): CUDA C++ cannot be compiled on this machine");
  auto t0 = std::chrono::steady_clock::now();
  nvrtcProgram prog;
  auto check = [&](nvrtcResult r, const char* what) {
    if (r != NVRTC_SUCCESS) throw Error(std::string("NVRTC: ") + what + ": " + nv.nvrtcGetErrorString(r));
  };
  check(nv.nvrtcCreateProgram(&prog, source.c_str(), "fusebox_kernels.cu", 0, nullptr, nullptr), "create program");
  std::string archOpt = "--gpu-architecture=" + arch;
  // No implicit contraction: NVVM would fuse a*b+c into one fma depending on the kernel around
  // it, so a value recomputed in the backward could differ by an ulp from the forward's saved
  // one, and a gradient mask `x == amax(x)` would miss its element. The prelude's dot-product
  // loops call fmaf themselves. -lineinfo: .loc lines in the PTX (and, through ptxas, in the
  // SASS) link each instruction to its CUDA line; it does not change the code.
  // --split-compile=0: NVVM and ptxas optimize the kernels on every core (a 12-layer GPT-2's
  // forward, 172 kernels: 3.7 -> 2.5 s to PTX on 2 cores); an NVRTC without it gets the rest.
  std::vector<const char*> opts = {archOpt.c_str(), "-std=c++17", "--fmad=false", "-default-device", "-lineinfo", "--split-compile=0"};
  nvrtcResult r = nv.nvrtcCompileProgram(prog, static_cast<int>(opts.size()), opts.data());
  constexpr nvrtcResult kInvalidOption = 5;  // NVRTC_ERROR_INVALID_OPTION
  if (r == kInvalidOption) {
    nv.nvrtcDestroyProgram(&prog);
    check(nv.nvrtcCreateProgram(&prog, source.c_str(), "fusebox_kernels.cu", 0, nullptr, nullptr), "create program");
    opts.pop_back();
    r = nv.nvrtcCompileProgram(prog, static_cast<int>(opts.size()), opts.data());
  }
  size_t logSize = 0;
  nv.nvrtcGetProgramLogSize(prog, &logSize);
  std::string log(logSize, '\0');
  if (logSize) nv.nvrtcGetProgramLog(prog, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  if (r != NVRTC_SUCCESS) {
    nv.nvrtcDestroyProgram(&prog);
    throw Error("generated CUDA does not compile (" + arch + "):\n" + log);
  }
  size_t ptxSize = 0;
  check(nv.nvrtcGetPTXSize(prog, &ptxSize), "PTX size");
  auto result = std::make_shared<CompiledCudaModule>();
  result->ptx.resize(ptxSize);
  check(nv.nvrtcGetPTX(prog, result->ptx.data()), "get PTX");
  if (output == CudaOutput::PtxAndCubin) {
    size_t cubinSize = 0;
    check(nv.nvrtcGetCUBINSize(prog, &cubinSize), "CUBIN size");
    result->cubin.resize(cubinSize);
    check(nv.nvrtcGetCUBIN(prog, result->cubin.data()), "get CUBIN");
  }
  nv.nvrtcDestroyProgram(&prog);
  result->log = log;
  result->arch = arch;
  result->compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  cache[key] = result;
  return result;
}

#else

bool nvrtcAvailable() { return false; }

std::shared_ptr<const CompiledCudaModule> compileCudaModule(const std::string&, int, CudaOutput) {
  throw Error("this build has no CUDA backend: configure with the CUDA Toolkit (FUSEBOX_WITH_CUDA=ON)");
}

#endif

}  // namespace fusebox

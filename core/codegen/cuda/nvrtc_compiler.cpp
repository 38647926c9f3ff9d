#include "core/codegen/cuda/nvrtc_compiler.h"

#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <vector>

#include "core/ir/error.h"

#ifdef FUSEBOX_HAS_NVRTC
#include <nvrtc.h>
#endif

namespace fusebox {

#ifdef FUSEBOX_HAS_NVRTC

bool nvrtcAvailable() { return true; }

std::shared_ptr<const CompiledCudaModule> compileCudaModule(const std::string& source, int cc) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<CompiledCudaModule>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  std::string arch = "compute_" + std::to_string(cc);
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : source) h = (h ^ c) * 0x100000001B3ull;
  std::string key = arch + ":" + std::to_string(h);
  if (auto it = cache.find(key); it != cache.end()) {
    auto hit = std::make_shared<CompiledCudaModule>(*it->second);
    hit->fromCache = true;
    return hit;
  }
  auto t0 = std::chrono::steady_clock::now();
  nvrtcProgram prog;
  auto check = [&](nvrtcResult r, const char* what) {
    if (r != NVRTC_SUCCESS) throw Error(std::string("NVRTC: ") + what + ": " + nvrtcGetErrorString(r));
  };
  check(nvrtcCreateProgram(&prog, source.c_str(), "fusebox_kernels.cu", 0, nullptr, nullptr), "create program");
  std::string archOpt = "--gpu-architecture=" + arch;
  std::vector<const char*> opts = {archOpt.c_str(), "-std=c++17", "--fmad=true", "-default-device"};
  nvrtcResult r = nvrtcCompileProgram(prog, static_cast<int>(opts.size()), opts.data());
  size_t logSize = 0;
  nvrtcGetProgramLogSize(prog, &logSize);
  std::string log(logSize, '\0');
  if (logSize) nvrtcGetProgramLog(prog, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  if (r != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    throw Error("generated CUDA does not compile (" + arch + "):\n" + log);
  }
  size_t ptxSize = 0;
  check(nvrtcGetPTXSize(prog, &ptxSize), "PTX size");
  auto result = std::make_shared<CompiledCudaModule>();
  result->ptx.resize(ptxSize);
  check(nvrtcGetPTX(prog, result->ptx.data()), "get PTX");
  nvrtcDestroyProgram(&prog);
  result->log = log;
  result->arch = arch;
  result->compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  cache[key] = result;
  return result;
}

#else

bool nvrtcAvailable() { return false; }

std::shared_ptr<const CompiledCudaModule> compileCudaModule(const std::string&, int) {
  throw Error("this build has no CUDA backend: configure with the CUDA Toolkit (FUSEBOX_WITH_CUDA=ON)");
}

#endif

}  // namespace fusebox

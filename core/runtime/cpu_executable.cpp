#include "core/runtime/cpu_executable.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>

#include "core/codegen/extern_call.h"
#include "core/ir/checked_math.h"
#include "core/ir/element_storage.h"
#include "core/ir/error.h"
#include "core/ir/memory_budget.h"
#include "core/runtime/index_fault.h"

#ifdef FUSEBOX_HAS_OPENBLAS
extern "C" void openblas_set_num_threads(int);
#endif

namespace fusebox {

namespace {

// Mirrors the FuseboxRuntime struct of the generated prelude.
struct RuntimeAbi {
  void* ctx;
  void (*launch)(void* ctx, int kernel, void (*fn)(long, long, void*), long rows, void* data);
  long (*threads)(void* ctx, int kernel);
  long (*version)(void* ctx, const void* buffer);
};

void toStorage(const Tensor& t, void* dst) { encodeElements(t.data, t.dtype, dst); }

// Every buffer and scratch block starts on a cache line: malloc gives large blocks at 16 bytes
// past a page, so each 64-byte vector a kernel loads or stores straddled two lines. Its slack:
// the alignment, then 64 bytes a kernel's last vector may reach past the end.
constexpr size_t kCacheLine = 64, kBlockSlack = kCacheLine + 64;
void* cacheLineAligned(std::vector<unsigned char>& block) {
  auto at = reinterpret_cast<uintptr_t>(block.data());
  return block.data() + ((kCacheLine - at % kCacheLine) % kCacheLine);
}

Tensor fromStorage(const Buffer& b, const void* src) {
  Tensor t(b.dtype, b.layout.sizes);
  decodeElements(src, b.dtype, t.data);
  return t;
}

}  // namespace

// Waking a worker and waiting for it costs ~10-30 us a launch (passive waiting), and a convolution
// launches three times; a kernel that gains less than that from a second core runs on the calling
// thread: a fused kernel moving under 256 KiB, or a GEMM or convolution under 16 MFLOP (their bytes
// say little of their work; of 1, 4, 16 and 64 MFLOP, 16 ran the corpus CNNs fastest on 2 cores).
// FUSEBOX_SERIAL_BYTES and FUSEBOX_SERIAL_FLOPS override (0: always share).
static int64_t fromEnvironment(const char* name, int64_t fallback) {
  const char* e = std::getenv(name);
  return e ? std::atoll(e) : fallback;
}

static bool tooSmallToShare(const LoopProgram& program, const Kernel& k) {
  static const int64_t maxBytes = fromEnvironment("FUSEBOX_SERIAL_BYTES", int64_t{256} << 10);
  static const int64_t maxFlops = fromEnvironment("FUSEBOX_SERIAL_FLOPS", int64_t{16} << 20);
  if (k.bytesRead + k.bytesWritten >= maxBytes) return false;
  if (!k.isExtern) return true;
  return describeExtern(program, program.nodes[k.items[0].node]).flops() < maxFlops;
}

struct CpuExecutable::Impl {
  const LoopProgram& program;
  const CppModule& module;
  std::shared_ptr<const CompiledCpuModule> compiled;
  ThreadPool& pool;
  std::vector<std::vector<unsigned char>> storage;  // owned blocks
  std::vector<void*> table;                         // buffers in module.bufferOrder, then scratch
  std::map<std::string, size_t> slot;
  std::vector<KernelProfile>* profile = nullptr;
  std::vector<bool> onCallingThread;  // per kernel, as profile: too little work to pay for waking the workers
  // Per program input: its place in table, and how many times the host wrote it (setInput,
  // setInputs), or -1 once linked to another module's output (rewritten by that module's every
  // run). What kernels key caches of transformed weights on (FuseboxRuntime::version).
  struct InputState {
    size_t slot;
    long version;
  };
  std::vector<InputState> inputs;
  RuntimeAbi abi{};

  static void launch(void* ctx, int kernel, void (*fn)(long, long, void*), long rows, void* data) {
    Impl& self = *static_cast<Impl*>(ctx);
    auto t0 = std::chrono::steady_clock::now();
    if (self.onCallingThread[kernel])
      fn(0, rows, data);
    else
      self.pool.parallelFor(rows, [&](int64_t b, int64_t e) { fn(b, e, data); });
    KernelProfile& p = (*self.profile)[kernel];
    if (p.lastStartMs < 0) p.lastStartMs = std::chrono::duration<double, std::milli>(t0.time_since_epoch()).count();
    p.totalMs += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    ++p.calls;
  }
  static long version(void* ctx, const void* buffer) {
    Impl& self = *static_cast<Impl*>(ctx);
    for (const InputState& in : self.inputs)
      if (self.table[in.slot] == buffer) return in.version;
    return -1;
  }
  static long threads(void* ctx, int kernel) {
    Impl& self = *static_cast<Impl*>(ctx);
    return self.onCallingThread[kernel] ? 1 : static_cast<long>(self.pool.size());
  }
};

CpuExecutable::CpuExecutable(const LoopProgram& program, const Schedule& schedule, const CppModule& module,
                             std::shared_ptr<const CompiledCpuModule> compiled, ThreadPool& pool)
    : impl_(new Impl{program, module, std::move(compiled), pool, {}, {}, {}, nullptr, {}, {}, {}}) {
  Impl& m = *impl_;
  // Storage, honoring the memory plan: a reusing buffer takes its predecessor's block.
  std::map<std::string, std::string> reuses(schedule.memory.reuse.begin(), schedule.memory.reuse.end());
  std::map<std::string, void*> ptr;
  // A block's bytes: the most any buffer that takes it needs (a channel-blocked buffer's padding).
  auto ownerOf = [&](std::string name) {
    while (reuses.count(name)) name = reuses.at(name);
    return name;
  };
  // A buffer's own bytes; nullopt where its element count overflows (refused by the budget check).
  std::map<std::string, std::optional<int64_t>> ownBytes;
  std::map<std::string, int64_t> blockBytes;
  for (const std::string& name : module.bufferOrder) {
    const Buffer& b = program.buffer(name);
    std::optional<int64_t> n = numelWithin(b.layout.sizes);
    std::optional<int64_t>& bytes = ownBytes[name] = n ? bytesOf(*n, dtypeBytes(b.dtype)) : std::nullopt;
    if (!bytes) continue;
    auto padded = module.paddedBytes.find(name);
    int64_t& at = blockBytes[ownerOf(name)];
    at = std::max(at, padded != module.paddedBytes.end() ? padded->second : *bytes);
  }
  for (const std::string& name : module.bufferOrder) {
    const Buffer& b = program.buffer(name);
    std::string owner = ownerOf(name);
    if (owner != name && ptr.count(owner)) {
      ptr[name] = ptr[owner];
      continue;
    }
    // The memory budget (--max-memory), checked before the block is allocated.
    std::optional<int64_t> need = ownBytes.at(name);
    if (need) need = blockBytes.at(owner);  // the block's: its own, or a sharer's padding
    checkMemory(need, "buffer '" + name + "'", std::string(dtypeName(b.dtype)) + shapeStr(shapeOf(b.layout.sizes)), {}, arenaBytes_);
    int64_t bytes = *need;
    m.storage.emplace_back(static_cast<size_t>(std::max<int64_t>(bytes, 1)) + kBlockSlack);
    arenaBytes_ += bytes;
    ptr[name] = cacheLineAligned(m.storage.back());
  }
  for (size_t i = 0; i < module.bufferOrder.size(); ++i) {
    m.table.push_back(ptr[module.bufferOrder[i]]);
    m.slot[module.bufferOrder[i]] = i;
  }
  for (int64_t bytes : module.scratchBytes) {
    if (bytes > 0) {
      checkMemory(bytes, "kernel scratch space", "partial results", {}, arenaBytes_);
      m.storage.emplace_back(static_cast<size_t>(bytes) + kBlockSlack);
      m.table.push_back(cacheLineAligned(m.storage.back()));
    } else {
      m.table.push_back(nullptr);
    }
  }
  for (const Kernel& k : schedule.kernels) {
    profile_.push_back({k.name, 0, 0, k.bytesRead + k.bytesWritten});
    m.onCallingThread.push_back(tooSmallToShare(program, k));
  }
#ifdef FUSEBOX_HAS_OPENBLAS
  openblas_set_num_threads(1);  // GEMM externs split their work over the pool (fb_gemm in the prelude)
#endif
  m.profile = &profile_;
  for (const std::string& name : program.inputs) m.inputs.push_back({m.slot.at(name), 0});
  m.abi = RuntimeAbi{&m, &Impl::launch, &Impl::threads, &Impl::version};
}

CpuExecutable::~CpuExecutable() = default;

void CpuExecutable::setInputs(const std::vector<Tensor>& inputs) {
  Impl& m = *impl_;
  if (inputs.size() != m.program.inputs.size())
    throw Error("CPU runtime: expected " + std::to_string(m.program.inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Buffer& b = m.program.buffer(m.program.inputs[i]);
    if (inputs[i].numel() != b.layout.numel() || inputs[i].dtype != b.dtype)
      throw Error("CPU runtime: input '" + b.name + "' has the wrong size or dtype");
    toStorage(inputs[i], m.table[m.inputs[i].slot]);
    if (m.inputs[i].version >= 0) ++m.inputs[i].version;
  }
}

void CpuExecutable::setInput(size_t index, const Tensor& t) {
  Impl& m = *impl_;
  const Buffer& b = m.program.buffer(m.program.inputs.at(index));
  if (t.numel() != b.layout.numel() || t.dtype != b.dtype) throw Error("CPU runtime: input '" + b.name + "' has the wrong size or dtype");
  toStorage(t, m.table[m.inputs[index].slot]);
  if (m.inputs[index].version >= 0) ++m.inputs[index].version;
}

void CpuExecutable::linkInput(size_t index, const CpuExecutable& from, size_t outputIndex) {
  Impl& m = *impl_;
  const Impl& f = *from.impl_;
  const Buffer& dst = m.program.buffer(m.program.inputs.at(index));
  const Buffer& src = f.program.buffer(f.program.outputs.at(outputIndex));
  if (dst.layout.numel() != src.layout.numel() || dst.dtype != src.dtype)
    throw Error("CPU runtime: cannot link '" + src.name + "' to input '" + dst.name + "': different size or dtype");
  m.table[m.inputs[index].slot] = f.table[f.slot.at(src.name)];
  m.inputs[index].version = -1;
}

void CpuExecutable::resetProfile() {
  for (KernelProfile& p : profile_) p.totalMs = 0, p.calls = 0;
}

double steadyNowMs() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void CpuExecutable::run() {
  Impl& m = *impl_;
  for (KernelProfile& p : profile_) p.lastStartMs = -1;
  using Entry = void (*)(const RuntimeAbi*, void* const*);
  reinterpret_cast<Entry>(m.compiled->entry)(&m.abi, m.table.data());
  ++runs_;
  if (long* f = m.compiled->fault; f && f[0] != 0) {
    const int64_t fault[3] = {f[0], f[1], f[2]};
    f[0] = f[1] = f[2] = 0;
    throwIfIndexFault(fault, m.module.indexChecks);
  }
}

std::vector<Tensor> CpuExecutable::outputs() const {
  const Impl& m = *impl_;
  std::vector<Tensor> out;
  for (const std::string& name : m.program.outputs) out.push_back(fromStorage(m.program.buffer(name), m.table[m.slot.at(name)]));
  return out;
}

}  // namespace fusebox

#include "core/runtime/cuda_executable.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>

#include "core/ir/element_storage.h"
#include "core/ir/error.h"
#include "core/runtime/cudnn_convolution.h"
#include "core/runtime/index_fault.h"

namespace fusebox {

namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUevent = void*;
using CUstream = void*;
using CUgraph = void*;
using CUgraphExec = void*;
using CUgraphNode = void*;

// The driver API and cuBLAS entry points Fusebox uses, resolved with dlopen.
struct Cuda {
  void* lib = nullptr;
  void* blasLib = nullptr;
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuModuleGetGlobal)(CUdeviceptr*, size_t*, CUmodule, const char*);
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void**, void**);
  CUresult (*cuEventCreate)(CUevent*, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuGetErrorString)(CUresult, const char**);
  CUresult (*cuStreamCreate)(CUstream*, unsigned);
  CUresult (*cuStreamSynchronize)(CUstream);
  // CUDA graphs: one iteration's launches captured from the stream and replayed.
  CUresult (*cuStreamBeginCapture)(CUstream, int);
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph*);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec*, CUgraph, unsigned long long);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphGetNodes)(CUgraph, CUgraphNode*, size_t*);
  CUresult (*cuGraphNodeGetType)(CUgraphNode, int*);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  CUresult (*cuGraphDestroy)(CUgraph);
  // cuBLAS (v2 API)
  int (*cublasCreate)(void**);
  int (*cublasSgemm)(void*, int, int, int, int, int, const float*, const float*, int, const float*, int, const float*, float*, int);
  int (*cublasSgemmStridedBatched)(void*, int, int, int, int, int, const float*, const float*, int, long long, const float*, int,
                                   long long, const float*, float*, int, long long, int);
  int (*cublasSetStream)(void*, CUstream);
  int (*cublasSetWorkspace)(void*, void*, size_t);
  void* blas = nullptr;
  CUcontext ctx = nullptr;
  CUstream stream = nullptr;  // every launch of every executable, in order (the backward reads the forward's buffers)
  bool graphs = false;        // the driver can capture and replay graphs
  std::string error;  // why it is unavailable
  bool ok = false;
};

template <class F>
bool resolve(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}

Cuda& cuda() {
  static Cuda c = [] {
    Cuda c{};
    c.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!c.lib) {
      c.error = "no CUDA driver (libcuda.so.1 not found)";
      return c;
    }
    bool ok = resolve(c.lib, "cuInit", c.cuInit) && resolve(c.lib, "cuDeviceGet", c.cuDeviceGet) &&
              resolve(c.lib, "cuDeviceGetAttribute", c.cuDeviceGetAttribute) &&
              resolve(c.lib, "cuDevicePrimaryCtxRetain", c.cuDevicePrimaryCtxRetain) &&
              resolve(c.lib, "cuCtxSetCurrent", c.cuCtxSetCurrent) && resolve(c.lib, "cuModuleLoadData", c.cuModuleLoadData) &&
              resolve(c.lib, "cuModuleUnload", c.cuModuleUnload) && resolve(c.lib, "cuModuleGetFunction", c.cuModuleGetFunction) &&
              resolve(c.lib, "cuModuleGetGlobal_v2", c.cuModuleGetGlobal) &&
              resolve(c.lib, "cuMemAlloc_v2", c.cuMemAlloc) && resolve(c.lib, "cuMemFree_v2", c.cuMemFree) &&
              resolve(c.lib, "cuMemcpyHtoD_v2", c.cuMemcpyHtoD) && resolve(c.lib, "cuMemcpyDtoH_v2", c.cuMemcpyDtoH) &&
              resolve(c.lib, "cuLaunchKernel", c.cuLaunchKernel) && resolve(c.lib, "cuEventCreate", c.cuEventCreate) &&
              resolve(c.lib, "cuEventRecord", c.cuEventRecord) && resolve(c.lib, "cuEventSynchronize", c.cuEventSynchronize) &&
              resolve(c.lib, "cuEventElapsedTime", c.cuEventElapsedTime) && resolve(c.lib, "cuEventDestroy_v2", c.cuEventDestroy) &&
              resolve(c.lib, "cuCtxSynchronize", c.cuCtxSynchronize) && resolve(c.lib, "cuGetErrorString", c.cuGetErrorString) &&
              resolve(c.lib, "cuStreamCreate", c.cuStreamCreate) && resolve(c.lib, "cuStreamSynchronize", c.cuStreamSynchronize);
    c.graphs = resolve(c.lib, "cuStreamBeginCapture_v2", c.cuStreamBeginCapture) && resolve(c.lib, "cuStreamEndCapture", c.cuStreamEndCapture) &&
               resolve(c.lib, "cuGraphInstantiateWithFlags", c.cuGraphInstantiateWithFlags) && resolve(c.lib, "cuGraphLaunch", c.cuGraphLaunch) &&
               resolve(c.lib, "cuGraphGetNodes", c.cuGraphGetNodes) && resolve(c.lib, "cuGraphNodeGetType", c.cuGraphNodeGetType) &&
               resolve(c.lib, "cuGraphExecDestroy", c.cuGraphExecDestroy) && resolve(c.lib, "cuGraphDestroy", c.cuGraphDestroy);
    if (!ok) {
      c.error = "the CUDA driver lacks an entry point Fusebox needs";
      return c;
    }
    if (c.cuInit(0) != 0) {
      c.error = "cuInit failed: no usable GPU";
      return c;
    }
    CUdevice dev;
    if (c.cuDeviceGet(&dev, 0) != 0 || c.cuDevicePrimaryCtxRetain(&c.ctx, dev) != 0) {
      c.error = "no CUDA device 0";
      return c;
    }
    for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so", "/usr/local/cuda/lib64/libcublas.so"})
      if ((c.blasLib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!c.blasLib || !resolve(c.blasLib, "cublasCreate_v2", c.cublasCreate) || !resolve(c.blasLib, "cublasSgemm_v2", c.cublasSgemm) ||
        !resolve(c.blasLib, "cublasSgemmStridedBatched", c.cublasSgemmStridedBatched) || !resolve(c.blasLib, "cublasSetStream_v2", c.cublasSetStream)) {
      c.error = "cuBLAS not found (libcublas.so)";
      return c;
    }
    c.cuCtxSetCurrent(c.ctx);
    if (c.cublasCreate(&c.blas) != 0) {
      c.error = "cublasCreate failed";
      return c;
    }
    if (c.cuStreamCreate(&c.stream, 1) != 0 || c.cublasSetStream(c.blas, c.stream) != 0) {  // CU_STREAM_NON_BLOCKING
      c.error = "cuStreamCreate or cublasSetStream failed";
      return c;
    }
    // cuBLAS allocates no workspace of its own while a graph is being captured: it gets one.
    CUdeviceptr workspace = 0;
    constexpr size_t kBlasWorkspace = size_t{32} << 20;
    if (c.graphs && resolve(c.blasLib, "cublasSetWorkspace_v2", c.cublasSetWorkspace) && c.cuMemAlloc(&workspace, kBlasWorkspace) == 0)
      c.graphs = c.cublasSetWorkspace(c.blas, reinterpret_cast<void*>(workspace), kBlasWorkspace) == 0;
    else
      c.graphs = false;
    c.ok = true;
    return c;
  }();
  if (c.ok) c.cuCtxSetCurrent(c.ctx);
  return c;
}

void check(CUresult r, const std::string& what) {
  if (r == 0) return;
  const char* msg = "unknown error";
  cuda().cuGetErrorString(r, &msg);
  throw Error("CUDA: " + what + " failed: " + msg + " (" + std::to_string(r) + ")");
}

int64_t storageBytes(const Buffer& b) { return std::max<int64_t>(b.bytes(), 4); }

// The position tiles of the prelude's implicit-GEMM forward convolution for a Conv launch, or 0
// where the direct kernel stays: gradients, and groups of fewer than 16 output channels (a
// depthwise convolution would fill 1 of a tile's 64 channels).
int64_t implicitGemmTiles(const CudaLaunch& l) {
  if (l.name != "fb_conv2d" || l.ints.size() < 16) return 0;
  int64_t N = l.ints[0], O = l.ints[4], OH = l.ints[7], OW = l.ints[8], groups = l.ints[9];
  if (groups < 1 || O / groups < 16 || groups > 65535) return 0;
  int64_t tiles = (N * OH * OW + 63) / 64;
  return tiles >= 1 && tiles <= INT32_MAX ? tiles : 0;
}

}  // namespace

bool cudaDeviceAvailable(std::string* why) {
  Cuda& c = cuda();
  if (why) *why = c.error;
  return c.ok;
}

int cudaComputeCapability() {
  Cuda& c = cuda();
  if (!c.ok) return 0;
  CUdevice dev;
  int major = 0, minor = 0;
  c.cuDeviceGet(&dev, 0);
  c.cuDeviceGetAttribute(&major, 75, dev);  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
  c.cuDeviceGetAttribute(&minor, 76, dev);
  return major * 10 + minor;
}

struct CudaExecutable::Impl {
  const LoopProgram& program;
  const CudaModule& module;
  CUmodule mod = nullptr;
  std::vector<CUdeviceptr> owned;
  std::vector<CUdeviceptr> table;  // device pointer of every buffer slot
  CUdeviceptr deviceTable = 0;
  std::map<std::string, size_t> slot;
  std::map<std::string, CUfunction> functions;
  std::vector<std::pair<CUevent, CUevent>> events;
  bool tableDirty = true;
  bool copiesInFlight = false;  // host-to-device copies since the last run (uploadTable waits for them)
  CUdeviceptr fault = 0;  // the module's fusebox_fault[3]
  CUevent stepStart = nullptr, stepStop = nullptr;  // around a whole iteration
  CUgraph graph = nullptr;                          // the captured iteration (replay())
  CUgraphExec exec = nullptr;
  // cuDNN's plan for each Conv launch (null: the prelude's direct kernel), and their workspace.
  std::vector<std::unique_ptr<CudnnConvolution>> convPlans;
  CUdeviceptr convWorkspace = 0;
};

CudaExecutable::CudaExecutable(const LoopProgram& program, const Schedule& schedule, const CudaModule& module,
                               std::shared_ptr<const CompiledCudaModule> compiled)
    : impl_(new Impl{program, module}) {
  std::string why;
  if (!cudaDeviceAvailable(&why)) throw Error("CUDA target unavailable: " + why);
  Cuda& c = cuda();
  Impl& m = *impl_;
  check(c.cuModuleLoadData(&m.mod, compiled->cubin.empty() ? compiled->ptx.c_str() : compiled->cubin.data()), "cuModuleLoadData");
  for (const std::string& e : module.entryPoints) {
    CUfunction f;
    check(c.cuModuleGetFunction(&f, m.mod, e.c_str()), "cuModuleGetFunction(" + e + ")");
    m.functions[e] = f;
  }
  size_t faultBytes = 0;
  check(c.cuModuleGetGlobal(&m.fault, &faultBytes, m.mod, "fusebox_fault"), "cuModuleGetGlobal(fusebox_fault)");
  std::map<std::string, std::string> reuses(schedule.memory.reuse.begin(), schedule.memory.reuse.end());
  std::map<std::string, CUdeviceptr> ptr;
  for (const std::string& name : module.bufferOrder) {
    std::string owner = name;
    while (reuses.count(owner)) owner = reuses.at(owner);
    if (owner != name && ptr.count(owner)) {
      ptr[name] = ptr[owner];
      continue;
    }
    CUdeviceptr d;
    check(c.cuMemAlloc(&d, static_cast<size_t>(storageBytes(program.buffer(name)))), "cuMemAlloc(" + name + ")");
    m.owned.push_back(d);
    ptr[name] = d;
  }
  for (size_t i = 0; i < module.bufferOrder.size(); ++i) {
    m.table.push_back(ptr[module.bufferOrder[i]]);
    m.slot[module.bufferOrder[i]] = i;
  }
  check(c.cuMemAlloc(&m.deviceTable, m.table.size() * sizeof(CUdeviceptr)), "cuMemAlloc(buffer table)");
  for (const Kernel& k : schedule.kernels) {
    profile_.push_back({k.name, 0, 0, k.bytesRead + k.bytesWritten});
    CUevent a, b;
    check(c.cuEventCreate(&a, 0), "cuEventCreate");
    check(c.cuEventCreate(&b, 0), "cuEventCreate");
    m.events.emplace_back(a, b);
  }
  check(c.cuEventCreate(&m.stepStart, 0), "cuEventCreate");
  check(c.cuEventCreate(&m.stepStop, 0), "cuEventCreate");
  planConvolutions();
}

// Each convolution through cuDNN where it is present and has an FMA algorithm for it.
void CudaExecutable::planConvolutions() {
  Impl& m = *impl_;
  m.convPlans.resize(m.module.launches.size());
  std::string why;
  int convs = 0, planned = 0, fusedEpilogues = 0;
  size_t workspace = 0;
  bool haveCudnn = !std::getenv("FUSEBOX_NO_CUDNN") && CudnnConvolution::available(cuda().stream, &why);
  for (size_t i = 0; i < m.module.launches.size(); ++i) {
    const CudaLaunch& l = m.module.launches[i];
    if (l.kind != CudaLaunch::Kind::Conv) continue;
    ++convs;
    if (!haveCudnn) continue;
    ConvDirection d = l.name == "fb_conv2d" ? ConvDirection::Forward : l.name == "fb_conv2d_input_grad" ? ConvDirection::InputGrad
                                                                                                      : ConvDirection::WeightGrad;
    std::string whyNot;
    m.convPlans[i] = CudnnConvolution::plan(d, l.ints, &whyNot);
    if (!m.convPlans[i]) {
      if (why.empty()) why = whyNot;
      continue;
    }
    ++planned;
    // bias [+ residual] [+ ReLU] in cuDNN's call: no epilogue kernel (a clamp to [0, 6] or SiLU keeps it)
    bool relu = l.lower && l.lo == 0.0f && !l.upper;
    if (d == ConvDirection::Forward && l.bias >= 0 && !l.silu && (relu || (!l.lower && !l.upper)) &&
        m.convPlans[i]->fuseEpilogue(relu))
      ++fusedEpilogues;
    workspace = std::max(workspace, m.convPlans[i]->workspaceBytes());
  }
  if (workspace) check(cuda().cuMemAlloc(&m.convWorkspace, workspace), "cuMemAlloc(cuDNN workspace)");
  if (convs)
    convolutions_ = "convolutions: " + std::to_string(planned) + " of " + std::to_string(convs) + " through cuDNN" +
                    (planned < convs ? " (" + (why.empty() ? std::string("FUSEBOX_NO_CUDNN") : why) + "; the rest prelude kernels)" : "") +
                    (fusedEpilogues ? ", " + std::to_string(fusedEpilogues) + " with the bias/residual/ReLU epilogue in the cuDNN call" : "");
}

CudaExecutable::~CudaExecutable() {
  Cuda& c = cuda();
  if (!c.ok) return;
  dropGraph();
  for (auto& [a, b] : impl_->events) c.cuEventDestroy(a), c.cuEventDestroy(b);
  for (CUevent e : {impl_->stepStart, impl_->stepStop})
    if (e) c.cuEventDestroy(e);
  impl_->convPlans.clear();
  if (impl_->convWorkspace) c.cuMemFree(impl_->convWorkspace);
  for (CUdeviceptr d : impl_->owned) c.cuMemFree(d);
  if (impl_->deviceTable) c.cuMemFree(impl_->deviceTable);
  if (impl_->mod) c.cuModuleUnload(impl_->mod);
}

void CudaExecutable::resetProfile() {
  for (KernelProfile& p : profile_) p.totalMs = 0, p.calls = 0;
}

static std::vector<unsigned char> toBytes(const Tensor& t, const Buffer& b) {
  std::vector<unsigned char> out(static_cast<size_t>(storageBytes(b)));
  encodeElements(t.data, b.dtype, out.data());
  return out;
}

void CudaExecutable::setInput(size_t index, const Tensor& t) {
  Impl& m = *impl_;
  const Buffer& b = m.program.buffer(m.program.inputs.at(index));
  if (t.numel() != b.layout.numel() || t.dtype != b.dtype) throw Error("CUDA runtime: input '" + b.name + "' has the wrong size or dtype");
  std::vector<unsigned char> bytes = toBytes(t, b);
  check(cuda().cuMemcpyHtoD(m.table[m.slot.at(b.name)], bytes.data(), static_cast<size_t>(b.bytes())), "cuMemcpyHtoD(" + b.name + ")");
  m.copiesInFlight = true;
}

void CudaExecutable::setInputs(const std::vector<Tensor>& inputs) {
  if (inputs.size() != impl_->program.inputs.size()) throw Error("CUDA runtime: wrong number of inputs");
  for (size_t i = 0; i < inputs.size(); ++i) setInput(i, inputs[i]);
}

void CudaExecutable::linkInput(size_t index, const CudaExecutable& from, size_t outputIndex) {
  Impl& m = *impl_;
  const Impl& f = *from.impl_;
  const std::string& dst = m.program.inputs.at(index);
  const std::string& src = f.program.outputs.at(outputIndex);
  if (m.program.buffer(dst).bytes() != f.program.buffer(src).bytes()) throw Error("CUDA runtime: cannot link '" + src + "' to '" + dst + "'");
  m.table[m.slot.at(dst)] = f.table[f.slot.at(src)];
  m.tableDirty = true;
  dropGraph();  // the captured cuBLAS and convolution launches hold buffer addresses
}

void CudaExecutable::dropGraph() {
  Cuda& c = cuda();
  Impl& m = *impl_;
  if (m.exec) c.cuGraphExecDestroy(m.exec);
  if (m.graph) c.cuGraphDestroy(m.graph);
  m.exec = nullptr;
  m.graph = nullptr;
  graphKernels_ = -1;
}

// One iteration's launches on the stream, each between its kernel's events when `profiled`.
void CudaExecutable::launchAll(bool profiled) {
  Cuda& c = cuda();
  Impl& m = *impl_;
  launches_ = 0;
  for (size_t index = 0; index < m.module.launches.size(); ++index) {
    const CudaLaunch& l = m.module.launches[index];
    auto [start, stop] = m.events[l.kernel];
    if (profiled) {
      profile_[l.kernel].lastLaunchMs = steadyNowMs();
      check(c.cuEventRecord(start, c.stream), "cuEventRecord");
    }
    auto launch = [&](const std::string& fn, int64_t grid, int64_t block, void** args, int64_t blockY = 1, int64_t gridY = 1,
                      int64_t gridZ = 1) {
      ++launches_;
      check(c.cuLaunchKernel(m.functions.at(fn), static_cast<unsigned>(grid), static_cast<unsigned>(gridY), static_cast<unsigned>(gridZ),
                             static_cast<unsigned>(block), static_cast<unsigned>(blockY), 1, 0, c.stream, args, nullptr),
            "cuLaunchKernel(" + fn + ")");
    };
    switch (l.kind) {
      case CudaLaunch::Kind::Generated: {
        void* args[] = {&m.deviceTable};
        if (l.steps.empty()) launch(l.name, l.grid, l.block, args, l.blockY);
        for (const CudaStep& st : l.steps) launch(st.name, st.grid, st.block, args);
        break;
      }
      case CudaLaunch::Kind::Matmul: {
        // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
        const float one = 1.0f, zero = 0.0f;
        int opA = l.transB ? 1 : 0, opB = l.transA ? 1 : 0;  // CUBLAS_OP_N = 0, CUBLAS_OP_T = 1
        int ldb = static_cast<int>(l.transB ? l.k : l.m), lda = static_cast<int>(l.transA ? l.n : l.k);
        const float* A = reinterpret_cast<const float*>(m.table[l.a]);
        const float* B = reinterpret_cast<const float*>(m.table[l.b]);
        float* C = reinterpret_cast<float*>(m.table[l.c]);
        int status = l.batch == 1
                         ? c.cublasSgemm(c.blas, opA, opB, static_cast<int>(l.m), static_cast<int>(l.n), static_cast<int>(l.k), &one, B, ldb,
                                         A, lda, &zero, C, static_cast<int>(l.m))
                         : c.cublasSgemmStridedBatched(c.blas, opA, opB, static_cast<int>(l.m), static_cast<int>(l.n), static_cast<int>(l.k),
                                                       &one, B, ldb, l.k * l.m, A, lda, l.n * l.k, &zero, C, static_cast<int>(l.m),
                                                       l.n * l.m, static_cast<int>(l.batch));
        if (status != 0) throw Error("cuBLAS: sgemm failed with status " + std::to_string(status));
        ++launches_;
        break;
      }
      case CudaLaunch::Kind::Conv: {
        struct {  // the prelude's FbConv
          CUdeviceptr x, w, y;
          int64_t f[16];
          CUdeviceptr bias, res;
          int32_t lower, upper;
          float lo, hi;
          int32_t silu;
        } p{m.table[l.a], m.table[l.b], m.table[l.c] + static_cast<CUdeviceptr>(l.cOffset) * sizeof(float), {}, l.bias < 0 ? 0 : m.table[l.bias], l.residual < 0 ? 0 : m.table[l.residual],
            l.lower, l.upper, l.lo, l.hi, l.silu};
        std::memcpy(p.f, l.ints.data(), sizeof p.f);
        void* args[] = {&p};
        const CudnnConvolution* plan = m.convPlans[index].get();
        if (plan && plan->epilogueFused() && plan->runFused(p.x, p.w, p.y, m.convWorkspace, p.bias, p.res)) {
          ++launches_;
        } else if (plan) {
          plan->run(p.x, p.w, p.y, m.convWorkspace);
          ++launches_;
          if (p.bias || p.res || p.lower || p.upper || p.silu) launch("fb_conv2d_epilogue", l.grid, 256, args);
        } else if (int64_t tiles = implicitGemmTiles(l)) {  // p.f: N C H W O KH KW OH OW groups ...
          launch("fb_conv2d_igemm", tiles, 256, args, 1, (p.f[4] / p.f[9] + 63) / 64, p.f[9]);
        } else {
          launch(l.name, l.grid, 256, args);
        }
        break;
      }
      case CudaLaunch::Kind::Pool: {
        struct {
          CUdeviceptr x, g, y;
          int64_t f[11];
          int mode;
        } p{l.a >= 0 ? m.table[l.a] : 0, l.b >= 0 ? m.table[l.b] : 0, m.table[l.c], {}, l.mode};
        std::memcpy(p.f, l.ints.data(), sizeof p.f);
        void* args[] = {&p};
        launch(l.name, l.grid, 256, args);
        break;
      }
      case CudaLaunch::Kind::IndexAdd: {
        CUdeviceptr x = m.table[l.a], idx = m.table[l.b], src = m.table[l.extra], out = m.table[l.c];
        int64_t outer = l.ints[0], rows = l.ints[1], n = l.ints[2], inner = l.ints[3];
        void* copyArgs[] = {&x, &idx, &src, &out, &outer, &rows, &n, &inner};
        launch("fb_index_add", l.grid, 256, copyArgs);
        int64_t site = l.site;
        void* scatterArgs[] = {&idx, &src, &out, &outer, &rows, &n, &inner, &site};
        launch("fb_index_add_scatter", std::min<int64_t>((outer * n * inner + 255) / 256, 1 << 20), 256, scatterArgs);
        break;
      }
    }
    if (profiled) check(c.cuEventRecord(stop, c.stream), "cuEventRecord");
  }
}

// Before a run: the buffer table if it changed, then one wait for the host copies (a copy from
// pageable memory may still be in flight, and the launch stream does not wait for it).
void CudaExecutable::uploadTable() {
  Impl& m = *impl_;
  if (m.tableDirty) {
    check(cuda().cuMemcpyHtoD(m.deviceTable, m.table.data(), m.table.size() * sizeof(CUdeviceptr)), "cuMemcpyHtoD(buffer table)");
    m.tableDirty = false;
    m.copiesInFlight = true;
  }
  if (m.copiesInFlight) check(cuda().cuCtxSynchronize(), "cuCtxSynchronize");
  m.copiesInFlight = false;
}

// Waits for the iteration, raises an index fault a kernel recorded, and reads the step's time.
void CudaExecutable::finish() {
  Cuda& c = cuda();
  Impl& m = *impl_;
  check(c.cuEventRecord(m.stepStop, c.stream), "cuEventRecord");
  check(c.cuStreamSynchronize(c.stream), "kernel execution");
  int64_t fault[3] = {0, 0, 0};
  check(c.cuMemcpyDtoH(fault, m.fault, sizeof fault), "cuMemcpyDtoH(fusebox_fault)");
  if (fault[0] != 0) {
    const int64_t none[3] = {0, 0, 0};
    check(c.cuMemcpyHtoD(m.fault, none, sizeof none), "cuMemcpyHtoD(fusebox_fault)");
    m.copiesInFlight = true;
    throwIfIndexFault(fault, m.module.indexChecks);
  }
  float ms = 0;
  check(c.cuEventElapsedTime(&ms, m.stepStart, m.stepStop), "cuEventElapsedTime");
  lastDeviceMs_ = ms;
}

void CudaExecutable::run() {
  Cuda& c = cuda();
  Impl& m = *impl_;
  uploadTable();
  // The first launch's start event is the run's origin on the device; the host clock then stands
  // for it (the previous run ended in a synchronize), so kernels of two graphs share one axis.
  double hostStart = steadyNowMs();
  check(c.cuEventRecord(m.stepStart, c.stream), "cuEventRecord");
  launchAll(true);
  finish();
  for (const CudaLaunch& l : m.module.launches) {
    float ms = 0;
    check(c.cuEventElapsedTime(&ms, m.events[l.kernel].first, m.events[l.kernel].second), "cuEventElapsedTime");
    profile_[l.kernel].totalMs += ms;
    ++profile_[l.kernel].calls;
    float fromOrigin = 0;
    check(c.cuEventElapsedTime(&fromOrigin, m.events[m.module.launches.front().kernel].first, m.events[l.kernel].first), "cuEventElapsedTime");
    profile_[l.kernel].lastStartMs = hostStart + fromOrigin;
  }
}

bool cudaGraphsAvailable() { return cuda().ok && cuda().graphs; }

void CudaExecutable::replay() {
  Cuda& c = cuda();
  Impl& m = *impl_;
  if (!c.graphs) throw Error("CUDA runtime: this driver cannot capture graphs (run with --no-cuda-graphs)");
  uploadTable();
  if (!m.exec) {  // capture one iteration's launches (no events: they would be graph nodes too)
    check(c.cuStreamBeginCapture(c.stream, 1), "cuStreamBeginCapture");  // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
    try {
      launchAll(false);
    } catch (...) {
      CUgraph broken = nullptr;
      c.cuStreamEndCapture(c.stream, &broken);
      if (broken) c.cuGraphDestroy(broken);
      throw;
    }
    check(c.cuStreamEndCapture(c.stream, &m.graph), "cuStreamEndCapture");
    check(c.cuGraphInstantiateWithFlags(&m.exec, m.graph, 0), "cuGraphInstantiateWithFlags");
    size_t n = 0;
    check(c.cuGraphGetNodes(m.graph, nullptr, &n), "cuGraphGetNodes");
    std::vector<CUgraphNode> nodes(n);
    check(c.cuGraphGetNodes(m.graph, nodes.data(), &n), "cuGraphGetNodes");
    graphKernels_ = 0;
    for (CUgraphNode node : nodes) {
      int type = -1;
      check(c.cuGraphNodeGetType(node, &type), "cuGraphNodeGetType");
      graphKernels_ += type == 0;  // CU_GRAPH_NODE_TYPE_KERNEL: cuBLAS's own kernels included
    }
  }
  check(c.cuEventRecord(m.stepStart, c.stream), "cuEventRecord");
  check(c.cuGraphLaunch(m.exec, c.stream), "cuGraphLaunch");
  finish();
}

std::vector<Tensor> CudaExecutable::outputs() const {
  const Impl& m = *impl_;
  std::vector<Tensor> out;
  for (const std::string& name : m.program.outputs) {
    const Buffer& b = m.program.buffer(name);
    std::vector<unsigned char> bytes(static_cast<size_t>(storageBytes(b)));
    check(cuda().cuMemcpyDtoH(bytes.data(), m.table[m.slot.at(name)], static_cast<size_t>(b.bytes())), "cuMemcpyDtoH(" + name + ")");
    Tensor t(b.dtype, b.layout.sizes);
    decodeElements(bytes.data(), b.dtype, t.data);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace fusebox

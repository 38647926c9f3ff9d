#include "core/runtime/cudnn_convolution.h"

#include <dlfcn.h>
#include <glob.h>

#include <climits>
#include <cstdlib>

#include "core/ir/error.h"

namespace fusebox {

namespace {

using Status = int;  // cudnnStatus_t: 0 is CUDNN_STATUS_SUCCESS
constexpr int kFloat = 0;                // CUDNN_DATA_FLOAT
constexpr int kNchw = 0;                 // CUDNN_TENSOR_NCHW
constexpr int kCrossCorrelation = 1;     // CUDNN_CROSS_CORRELATION
constexpr int kFmaMath = 3;              // CUDNN_FMA_MATH: no tensor-core (TF32) kernels
constexpr int kActivationRelu = 1;       // CUDNN_ACTIVATION_RELU
constexpr int kActivationIdentity = 5;   // CUDNN_ACTIVATION_IDENTITY
constexpr int kPropagateNan = 1;         // CUDNN_PROPAGATE_NAN: relu(NaN) is NaN, as in the interpreter
constexpr int kImplicitPrecompGemm = 1;  // the one forward algorithm that takes an identity activation
constexpr size_t kMaxWorkspace = size_t{512} << 20;

// cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t share this layout.
struct AlgoPerf {
  int algo;
  Status status;
  float time;
  size_t memory;
  int determinism;
  int mathType;
  int reserved[3];
};

// The legacy convolution API of cuDNN 8 and 9, resolved with dlopen.
struct Cudnn {
  std::vector<void*> libs;
  Status (*create)(void**);
  Status (*setStream)(void*, void*);
  Status (*createTensor)(void**);
  Status (*setTensor4d)(void*, int, int, int, int, int, int);
  Status (*destroyTensor)(void*);
  Status (*createFilter)(void**);
  Status (*setFilter4d)(void*, int, int, int, int, int, int);
  Status (*destroyFilter)(void*);
  Status (*createConv)(void**);
  Status (*setConv2d)(void*, int, int, int, int, int, int, int, int);
  Status (*setGroupCount)(void*, int);
  Status (*setMathType)(void*, int);
  Status (*destroyConv)(void*);
  Status (*fwdAlgos)(void*, void*, void*, void*, void*, int, int*, AlgoPerf*);
  Status (*bwdDataAlgos)(void*, void*, void*, void*, void*, int, int*, AlgoPerf*);
  Status (*bwdFilterAlgos)(void*, void*, void*, void*, void*, int, int*, AlgoPerf*);
  Status (*forward)(void*, const void*, void*, const void*, void*, const void*, void*, int, void*, size_t, const void*, void*, void*);
  Status (*backwardData)(void*, const void*, void*, const void*, void*, const void*, void*, int, void*, size_t, const void*, void*, void*);
  Status (*backwardFilter)(void*, const void*, void*, const void*, void*, const void*, void*, int, void*, size_t, const void*, void*, void*);
  Status (*createActivation)(void**);
  Status (*setActivation)(void*, int, int, double);
  Status (*destroyActivation)(void*);
  // cudnnConvolutionBiasActivationForward(handle, alpha1, xDesc, x, wDesc, w, convDesc, algo,
  // workspace, bytes, alpha2, zDesc, z, biasDesc, bias, activationDesc, yDesc, y)
  Status (*biasActivationForward)(void*, const void*, void*, const void*, void*, const void*, void*, int, void*, size_t, const void*, void*,
                                  const void*, void*, const void*, void*, void*, void*);
  const char* (*errorString)(Status);
  void* handle = nullptr;
  std::string error;
  bool ok = false;

  template <class F>
  bool resolve(const char* name, F& fn) {
    for (void* lib : libs)
      if ((fn = reinterpret_cast<F>(dlsym(lib, name)))) return true;
    error = std::string("libcudnn lacks ") + name;
    return false;
  }
};

// Where libcudnn.so.9 may be: FUSEBOX_CUDNN, the loader's path, PyTorch's wheels.
std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("FUSEBOX_CUDNN"); env && *env) out.push_back(env);
  out.push_back("libcudnn.so.9");
  out.push_back("libcudnn.so.8");
  for (const char* pattern : {"/usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib/libcudnn.so.9",
                              "/usr/local/lib/python3*/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
                              "/usr/lib/python3*/dist-packages/nvidia/cudnn/lib/libcudnn.so.9",
                              "/opt/conda/lib/python3*/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
                              "/root/.local/lib/python3*/site-packages/nvidia/cudnn/lib/libcudnn.so.9"}) {
    glob_t g{};
    if (glob(pattern, 0, nullptr, &g) == 0)
      for (size_t i = 0; i < g.gl_pathc; ++i) out.push_back(g.gl_pathv[i]);
    globfree(&g);
  }
  return out;
}

Cudnn& cudnn() {
  static Cudnn c = [] {
    Cudnn c{};
    std::string dir;
    for (const std::string& path : candidates()) {
      if (void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
        c.libs.push_back(lib);
        if (size_t slash = path.rfind('/'); slash != std::string::npos) dir = path.substr(0, slash + 1);
        break;
      }
    }
    if (c.libs.empty()) {
      c.error = "cuDNN not found (libcudnn.so.9; FUSEBOX_CUDNN names another file)";
      return c;
    }
    // cuDNN 9 splits the legacy convolution API into sub-libraries beside the shim.
    for (const char* sub : {"libcudnn_graph.so.9", "libcudnn_ops.so.9", "libcudnn_cnn.so.9"})
      if (void* lib = dlopen((dir + sub).c_str(), RTLD_NOW | RTLD_GLOBAL)) c.libs.push_back(lib);
    bool ok = c.resolve("cudnnCreate", c.create) && c.resolve("cudnnSetStream", c.setStream) &&
              c.resolve("cudnnCreateTensorDescriptor", c.createTensor) && c.resolve("cudnnSetTensor4dDescriptor", c.setTensor4d) &&
              c.resolve("cudnnDestroyTensorDescriptor", c.destroyTensor) && c.resolve("cudnnCreateFilterDescriptor", c.createFilter) &&
              c.resolve("cudnnSetFilter4dDescriptor", c.setFilter4d) && c.resolve("cudnnDestroyFilterDescriptor", c.destroyFilter) &&
              c.resolve("cudnnCreateConvolutionDescriptor", c.createConv) &&
              c.resolve("cudnnSetConvolution2dDescriptor", c.setConv2d) && c.resolve("cudnnSetConvolutionGroupCount", c.setGroupCount) &&
              c.resolve("cudnnSetConvolutionMathType", c.setMathType) && c.resolve("cudnnDestroyConvolutionDescriptor", c.destroyConv) &&
              c.resolve("cudnnGetConvolutionForwardAlgorithm_v7", c.fwdAlgos) &&
              c.resolve("cudnnGetConvolutionBackwardDataAlgorithm_v7", c.bwdDataAlgos) &&
              c.resolve("cudnnGetConvolutionBackwardFilterAlgorithm_v7", c.bwdFilterAlgos) &&
              c.resolve("cudnnConvolutionForward", c.forward) && c.resolve("cudnnConvolutionBackwardData", c.backwardData) &&
              c.resolve("cudnnConvolutionBackwardFilter", c.backwardFilter) && c.resolve("cudnnGetErrorString", c.errorString) &&
              c.resolve("cudnnCreateActivationDescriptor", c.createActivation) &&
              c.resolve("cudnnSetActivationDescriptor", c.setActivation) &&
              c.resolve("cudnnDestroyActivationDescriptor", c.destroyActivation) &&
              c.resolve("cudnnConvolutionBiasActivationForward", c.biasActivationForward);
    if (!ok) return c;
    if (Status s = c.create(&c.handle); s != 0) {
      c.error = std::string("cudnnCreate failed: ") + c.errorString(s);
      return c;
    }
    c.ok = true;
    return c;
  }();
  return c;
}

const char* algoName(ConvDirection d, int algo) {
  static const char* const fwd[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
  static const char* const data[] = {"ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
  static const char* const filter[] = {"ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED", "FFT_TILING"};
  auto pick = [algo](const char* const* names, int n) { return algo >= 0 && algo < n ? names[algo] : "unknown"; };
  switch (d) {
    case ConvDirection::Forward: return pick(fwd, 8);
    case ConvDirection::InputGrad: return pick(data, 6);
    case ConvDirection::WeightGrad: return pick(filter, 7);
  }
  return "unknown";
}

}  // namespace

bool CudnnConvolution::available(void* stream, std::string* why) {
  Cudnn& c = cudnn();
  if (c.ok)
    if (Status s = c.setStream(c.handle, stream); s != 0) {
      if (why) *why = std::string("cudnnSetStream failed: ") + c.errorString(s);
      return false;
    }
  if (why) *why = c.error;
  return c.ok;
}

std::unique_ptr<CudnnConvolution> CudnnConvolution::plan(ConvDirection direction, const std::vector<int64_t>& f, std::string* why) {
  Cudnn& c = cudnn();
  auto fail = [why](const std::string& what) {
    if (why) *why = what;
    return nullptr;
  };
  if (!c.ok) return fail(c.error);
  if (f.size() < 16) return fail("a convolution needs 16 fields");
  for (int64_t v : f)
    if (v < 0 || v > INT_MAX) return fail("a size does not fit cuDNN's int descriptors");
  auto i = [&f](int k) { return static_cast<int>(f[static_cast<size_t>(k)]); };
  int N = i(0), C = i(1), H = i(2), W = i(3), O = i(4), KH = i(5), KW = i(6), OH = i(7), OW = i(8), groups = i(9);
  if (groups < 1 || C % groups || O % groups) return fail("channels not divisible by the groups");
  std::unique_ptr<CudnnConvolution> p(new CudnnConvolution);
  p->direction_ = direction;
  p->outChannels_ = O;
  bool ok = c.createTensor(&p->xDesc_) == 0 && c.createTensor(&p->yDesc_) == 0 && c.createFilter(&p->wDesc_) == 0 &&
            c.createConv(&p->convDesc_) == 0 && c.setTensor4d(p->xDesc_, kNchw, kFloat, N, C, H, W) == 0 &&
            c.setTensor4d(p->yDesc_, kNchw, kFloat, N, O, OH, OW) == 0 && c.setFilter4d(p->wDesc_, kFloat, kNchw, O, C / groups, KH, KW) == 0 &&
            c.setConv2d(p->convDesc_, i(12), i(13), i(10), i(11), i(14), i(15), kCrossCorrelation, kFloat) == 0 &&
            c.setGroupCount(p->convDesc_, groups) == 0 && c.setMathType(p->convDesc_, kFmaMath) == 0;
  if (!ok) return fail("cuDNN rejected the convolution's descriptors");
  AlgoPerf perf[16];
  int count = 0;
  Status s = direction == ConvDirection::Forward     ? c.fwdAlgos(c.handle, p->xDesc_, p->wDesc_, p->convDesc_, p->yDesc_, 16, &count, perf)
             : direction == ConvDirection::InputGrad ? c.bwdDataAlgos(c.handle, p->wDesc_, p->yDesc_, p->convDesc_, p->xDesc_, 16, &count, perf)
                                                     : c.bwdFilterAlgos(c.handle, p->xDesc_, p->yDesc_, p->convDesc_, p->wDesc_, 16, &count, perf);
  if (s != 0) return fail(std::string("cuDNN found no algorithm: ") + c.errorString(s));
  for (int k = 0; k < count; ++k)  // the heuristics' order, FMA math only, a bounded workspace
    if (perf[k].status == 0 && perf[k].mathType == kFmaMath && perf[k].memory <= kMaxWorkspace) {
      p->algo_ = perf[k].algo;
      p->workspace_ = perf[k].memory;
      return p;
    }
  return fail("cuDNN has no FMA-math algorithm for this convolution");
}

CudnnConvolution::~CudnnConvolution() {
  Cudnn& c = cudnn();
  if (!c.ok) return;
  if (xDesc_) c.destroyTensor(xDesc_);
  if (yDesc_) c.destroyTensor(yDesc_);
  if (wDesc_) c.destroyFilter(wDesc_);
  if (convDesc_) c.destroyConv(convDesc_);
  if (biasDesc_) c.destroyTensor(biasDesc_);
  if (activationDesc_) c.destroyActivation(activationDesc_);
}

bool CudnnConvolution::fuseEpilogue(bool relu) {
  Cudnn& c = cudnn();
  if (!c.ok || direction_ != ConvDirection::Forward || activationDesc_ || (!relu && algo_ != kImplicitPrecompGemm)) return false;
  void* bias = nullptr;
  void* act = nullptr;
  bool ok = c.createTensor(&bias) == 0 && c.setTensor4d(bias, kNchw, kFloat, 1, outChannels_, 1, 1) == 0 && c.createActivation(&act) == 0 &&
            c.setActivation(act, relu ? kActivationRelu : kActivationIdentity, kPropagateNan, 0.0) == 0;
  if (!ok) {
    if (bias) c.destroyTensor(bias);
    if (act) c.destroyActivation(act);
    return false;
  }
  biasDesc_ = bias;
  activationDesc_ = act;
  return true;
}

bool CudnnConvolution::runFused(uint64_t x, uint64_t w, uint64_t y, uint64_t workspace, uint64_t bias, uint64_t residual) const {
  Cudnn& c = cudnn();
  const float one = 1.0f, zero = 0.0f;
  auto ptr = [](uint64_t p) { return reinterpret_cast<void*>(p); };
  // y = act(1 * conv(x, w) + alpha2 * z + bias); without a residual z is y itself, scaled by 0
  Status s = c.biasActivationForward(c.handle, &one, xDesc_, ptr(x), wDesc_, ptr(w), convDesc_, algo_, ptr(workspace), workspace_,
                                     residual ? &one : &zero, yDesc_, ptr(residual ? residual : y), biasDesc_, ptr(bias), activationDesc_,
                                     yDesc_, ptr(y));
  return s == 0;
}

std::string CudnnConvolution::algorithm() const {
  const char* dir = direction_ == ConvDirection::Forward ? "fwd" : direction_ == ConvDirection::InputGrad ? "bwd data" : "bwd filter";
  return std::string(dir) + " algo " + std::to_string(algo_) + " (" + algoName(direction_, algo_) + ")";
}

void CudnnConvolution::run(uint64_t x, uint64_t w, uint64_t y, uint64_t workspace) const {
  Cudnn& c = cudnn();
  const float one = 1.0f, zero = 0.0f;
  auto ptr = [](uint64_t p) { return reinterpret_cast<void*>(p); };
  Status s = 0;
  // The prelude's FbConv roles: forward (x, w) -> y; input grad (x = dy, w) -> y = dx;
  // weight grad (x, w = dy) -> y = dw.
  switch (direction_) {
    case ConvDirection::Forward:
      s = c.forward(c.handle, &one, xDesc_, ptr(x), wDesc_, ptr(w), convDesc_, algo_, ptr(workspace), workspace_, &zero, yDesc_, ptr(y));
      break;
    case ConvDirection::InputGrad:
      s = c.backwardData(c.handle, &one, wDesc_, ptr(w), yDesc_, ptr(x), convDesc_, algo_, ptr(workspace), workspace_, &zero, xDesc_, ptr(y));
      break;
    case ConvDirection::WeightGrad:
      s = c.backwardFilter(c.handle, &one, xDesc_, ptr(x), yDesc_, ptr(w), convDesc_, algo_, ptr(workspace), workspace_, &zero, wDesc_, ptr(y));
      break;
  }
  if (s != 0) throw Error(std::string("cuDNN: ") + algorithm() + " failed: " + c.errorString(s));
}

}  // namespace fusebox

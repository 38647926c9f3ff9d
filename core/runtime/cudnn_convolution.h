// Convolutions on the GPU through cuDNN, opened at run time as cuBLAS is (libcudnn.so.9: NVIDIA's
// Debian package, or the copy PyTorch's wheels carry under site-packages/nvidia/cudnn/lib; or
// the file FUSEBOX_CUDNN names). Forward, input gradient and weight gradient, grouped and
// depthwise included, f32 with FMA math only (no TF32, as the interpreter and PyTorch's
// allow_tf32=False). Without cuDNN the direct prelude kernels run instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fusebox {

// Which convolution a plan computes; the buffers are the prelude's FbConv x, w, y.
enum class ConvDirection { Forward, InputGrad, WeightGrad };

class CudnnConvolution {
public:
  // Whether libcudnn was found and its handle made; later plans run on `stream`. `why` says what
  // is missing.
  static bool available(void* stream, std::string* why = nullptr);

  // A plan for one convolution of the prelude's 16 FbConv fields (N, C, H, W, O, KH, KW, OH, OW,
  // groups, sh, sw, ph, pw, dh, dw), or null when cuDNN has no FMA algorithm for it (or a size
  // does not fit its int descriptors).
  static std::unique_ptr<CudnnConvolution> plan(ConvDirection direction, const std::vector<int64_t>& fields, std::string* why = nullptr);
  ~CudnnConvolution();

  size_t workspaceBytes() const { return workspace_; }
  std::string algorithm() const;  // "fwd algo 1 (IMPLICIT_PRECOMP_GEMM)"

  // Enqueues y = conv(x, w) (or the gradient) on the stream `available` was given.
  void run(uint64_t x, uint64_t w, uint64_t y, uint64_t workspace) const;

  // A forward's epilogue y = act(conv(x, w) + bias [+ residual]) in the same cuDNN call
  // (cudnnConvolutionBiasActivationForward), act ReLU or none: whether cuDNN takes it for this
  // plan (no activation only with the IMPLICIT_PRECOMP_GEMM algorithm; a residual with any, as z
  // scaled by 1). Otherwise the caller runs
  // the epilogue as a kernel after `run`.
  bool fuseEpilogue(bool relu);
  bool epilogueFused() const { return activationDesc_ != nullptr; }
  // Enqueues the fused call; residual 0 when there is none. False when cuDNN refuses it (its
  // support is known only at the call): the caller then runs `run` and the epilogue kernel.
  bool runFused(uint64_t x, uint64_t w, uint64_t y, uint64_t workspace, uint64_t bias, uint64_t residual) const;

private:
  CudnnConvolution() = default;
  ConvDirection direction_ = ConvDirection::Forward;
  void* xDesc_ = nullptr;  // the input image [N, C, H, W]
  void* yDesc_ = nullptr;  // the output image [N, O, OH, OW]
  void* wDesc_ = nullptr;  // the filter [O, C/groups, KH, KW]
  void* convDesc_ = nullptr;
  void* biasDesc_ = nullptr;        // [1, O, 1, 1], once the epilogue is fused
  void* activationDesc_ = nullptr;  // ReLU or identity, once the epilogue is fused
  int algo_ = 0;
  int outChannels_ = 0;
  size_t workspace_ = 0;
};

}  // namespace fusebox

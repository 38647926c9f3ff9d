#include "core/codegen/cpu/channel_blocking.h"

#include <map>
#include <vector>

#include "core/codegen/extern_call.h"

namespace fusebox {

namespace {

// A conv2d forward kernel as the plan sees it.
struct ConvUse {
  std::string image, output, residual;
  bool pointwise = false, depthwise = false;
  bool placed = false;  // writes a slice of a concatenation
};

std::optional<ConvUse> convUse(const LoopProgram& p, const Kernel& k) {
  if (!k.isExtern) return std::nullopt;
  ExternCall c = describeExtern(p, p.nodes[k.items[0].node]);
  if (c.kind != ExternKind::Conv2d) return std::nullopt;
  const auto& f = c.fields;  // N C H W O KH KW OH OW groups sh sw ph pw dh dw
  ConvUse u;
  u.image = c.inputs[0];
  u.output = k.epilogue ? k.epilogue->output : c.output;
  u.residual = k.epilogue ? k.epilogue->residual : "";
  u.placed = k.epilogue && k.epilogue->concat >= 0;
  u.pointwise = f[5] == 1 && f[6] == 1 && f[10] == 1 && f[11] == 1 && f[12] == 0 && f[13] == 0 && f[9] == 1;
  int64_t span = (f[5] - 1) * f[14] + 1;
  u.depthwise = f[9] == f[1] && f[4] == f[1] && f[5] * f[6] <= kBlockedDepthwiseTaps && u.residual.empty() &&
                (f[3] + 2 * f[13]) * kChannelBlock * span <= kBlockedDepthwiseBandFloats &&
                (f[8] + kChannelBlock) * kChannelBlock <= kBlockedDepthwiseRowFloats;
  return u;
}

}  // namespace

std::set<std::string> planChannelBlocking(const LoopProgram& p, const Schedule& s) {
  std::set<std::string> blocked;
  if (s.trainingGraph) return blocked;
  std::map<int, ConvUse> convs;  // kernel index -> its convolution
  std::map<std::string, std::vector<int>> readers;
  for (size_t i = 0; i < s.kernels.size(); ++i) {
    const Kernel& k = s.kernels[i];
    if (auto u = convUse(p, k)) convs[static_cast<int>(i)] = *u;
    for (const std::string& b : k.readBuffers) readers[b].push_back(static_cast<int>(i));
  }
  std::set<std::string> outputs(p.outputs.begin(), p.outputs.end());
  // Candidates: written by a convolution that can write blocked, read only where blocked is read.
  for (const auto& [i, u] : convs) {
    const Kernel& k = s.kernels[i];
    const Buffer& b = p.buffer(u.output);
    bool ok = (u.pointwise || u.depthwise) && !u.placed && k.storedBuffers.size() == 1 && k.storedBuffers[0] == u.output &&
              b.kind == Buffer::Kind::Intermediate && !outputs.count(u.output) && b.dtype == DType::F32 &&
              b.layout.sizes.size() == 4 && (u.depthwise || b.layout.sizes[1] > kChannelBlock);
    for (int r : readers[u.output]) {
      auto it = convs.find(r);
      if (!ok) break;
      ok = it != convs.end() && (it->second.pointwise || it->second.depthwise) &&
           (it->second.image == u.output || it->second.residual == u.output);
      // Read as the weights or the bias as well: not an image.
      for (const std::string& rb : s.kernels[r].readBuffers)
        if (rb == u.output && it != convs.end() && it->second.image != rb && it->second.residual != rb) ok = false;
    }
    if (ok) blocked.insert(u.output);
  }
  // A residual and its convolution's output: both or neither (the epilogue adds them lane by lane).
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& [i, u] : convs)
      if (!u.residual.empty() && blocked.count(u.residual) != blocked.count(u.output))
        changed |= blocked.erase(u.residual) + blocked.erase(u.output) > 0;
  }
  return blocked;
}

int64_t blockedChannelBytes(const Buffer& b) {
  const auto& d = b.layout.sizes;
  int64_t channels = (d[1] + kChannelBlock - 1) / kChannelBlock * kChannelBlock;
  return d[0] * channels * d[2] * d[3] * dtypeBytes(b.dtype);
}

}  // namespace fusebox

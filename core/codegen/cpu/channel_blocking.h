// Which of a CPU module's buffers hold their images channel-blocked: image n's channel c at
// position p at ((n * Cp / B + c / B) * H * W + p) * B + c % B, B the vector width in floats and
// Cp the channels padded to a multiple of 16 (onnxruntime's NCHWc, oneDNN's nChw16c). A vector is
// then B channels of one position, so a 1x1 convolution is a tile of positions x output-channel
// vectors that broadcasts its input (no transposes, no packing of the image) and a depthwise
// convolution reads its taps as vectors (no transposes into and out of channels-last bands). The
// buffers stay blocked from the convolution that writes them to the convolutions that read them;
// nothing else sees them.
//
// A buffer is blocked when a 1x1 (stride 1, no padding, ungrouped) of more than 16 output channels
// (tiles of 2 vectors) or a depthwise convolution writes it as its output (not a slice of a
// concatenation), it is not a program output, and every kernel that reads it is such a
// convolution reading it as its image or its epilogue's residual. A residual and its
// convolution's output are blocked together or not at all; otherwise either side of a
// convolution may be planes while the other is blocked: the kernel turns 16 x 16 tiles on the way
// in or out (a depthwise convolution between an expand and a squeeze-excitation). Inference
// graphs only: a training step's backward reads the forward's activations. Decided from the
// schedule alone, so that the plan (and the code) is the same on every host.
#pragma once

#include <set>
#include <string>

#include "core/loopir/loop_ir.h"
#include "core/schedule/schedule.h"

namespace fusebox {

// The runtime library's fb_conv_blocked limits, which the plan mirrors: the block the channels
// are padded to (the widest vector, AVX-512's), a depthwise kernel of at most
// kBlockedDepthwiseTaps taps whose padded input rows (span rows of W + 2 pw positions, 16 floats
// each) fit its band and whose output row (OW + 16 positions of 16) fits its row buffer.
constexpr int64_t kChannelBlock = 16;
constexpr int64_t kBlockedDepthwiseTaps = 64;
constexpr int64_t kBlockedDepthwiseBandFloats = 32768;
constexpr int64_t kBlockedDepthwiseRowFloats = 8192;

std::set<std::string> planChannelBlocking(const LoopProgram& p, const Schedule& s);

// Bytes of a blocked buffer: its channels padded to a multiple of kChannelBlock (the padding's
// lanes hold anything; nothing reads them but as 0-weighted terms of lanes nobody reads).
int64_t blockedChannelBytes(const Buffer& b);

}  // namespace fusebox

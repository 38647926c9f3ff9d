// The runtime library's convolutions on channel-blocked images (see cpu_blocked_conv.cpp and
// channel_blocking.h for the layout and when it is used).
#pragma once

namespace fusebox {

// Source text appended to cpuRuntimeLibrary(): fb_conv_blocked and its helpers.
const char* cpuBlockedConvLibrary();

}  // namespace fusebox

// Reading a model file from disk, for every loader (.fbx and .onnx): only regular files are read
// (a FIFO, /dev/zero, a directory or a socket would block or never end), and only up to a size
// limit, so a model path can neither hang Fusebox nor fill its memory.
#pragma once

#include <cstdint>
#include <string>

namespace fusebox {

constexpr int64_t kMaxModelFileBytes = int64_t{2} << 30;  // 2 GiB: protobuf's own limit for .onnx

// Whether `path` names something on disk at all (stat succeeds); the loaders use it to tell a
// missing file from a built-in model name.
bool modelPathExists(const std::string& path);

// The whole content of `path`. Throws Error naming the path when it cannot be opened or is not a
// regular file ("is a FIFO", "is a directory", ...), LimitError when it is larger than `maxBytes`.
std::string readModelFile(const std::string& path, int64_t maxBytes = kMaxModelFileBytes);

}  // namespace fusebox

// libFuzzer target: any bytes as a .onnx file must load or throw fusebox::Error, never crash
// (ASan and UBSan report memory errors and undefined behaviour as crashes).
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "core/frontend/onnx/onnx_loader.h"
#include "core/interp/interpreter.h"
#include "core/ir/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/fusebox_fuzz_" + std::to_string(::getpid()) + ".onnx";
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  try {
    fusebox::OnnxModel m = fusebox::loadOnnx(path);
    // A model that loads must also evaluate (or fail with an Error naming the node).
    if (m.graph.nodes().size() < 64) fusebox::interpret(m.graph, fusebox::makeInputs(m.graph, 1));
  } catch (const fusebox::Error&) {
  }
  return 0;
}

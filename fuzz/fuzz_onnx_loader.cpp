// libFuzzer target: any bytes as a .onnx file must load or throw fusebox::Error, never crash; a small
// model that loads is also interpreted (when its work is bounded: fuzz_limits.h) and compiled to
// C++ and CUDA, and the source checked
// (ASan and UBSan report memory errors and undefined behaviour as crashes).
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "core/codegen/cuda/cuda_codegen.h"
#include "core/frontend/model_loader.h"
#include "core/frontend/onnx/onnx_loader.h"
#include "core/interp/interpreter.h"
#include "core/ir/error.h"
#include "core/pipeline/pipeline.h"
#include "fuzz/fuzz_limits.h"
#include "fuzz/generated_source_check.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fusebox::fuzz::limitMemory();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/fusebox_fuzz_" + std::to_string(::getpid()) + ".onnx";
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  try {
    fusebox::OnnxModel m = fusebox::loadOnnx(path);
    // A model that loads must also evaluate (or fail with an Error naming the node).
    if (m.graph.nodes().size() >= 64) return 0;
    if (fusebox::fuzz::interpretationWork(m.graph) <= fusebox::fuzz::kMaxInterpretedWork)
      fusebox::interpret(m.graph, fusebox::makeInputs(m.graph, 1));
    // ONNX names are arbitrary bytes: compiled, they must reach generated code only as escaped
    // comments and sanitized identifiers.
    fusebox::Pipeline p(fusebox::loadModel(path), {});
    p.runAll();
    fusebox::fuzz::checkGeneratedSource(p.modules("cpu").at(0).source, fusebox::cpuPrelude());
    fusebox::fuzz::checkGeneratedSource(p.modules("cuda").at(0).source, fusebox::cudaPrelude());
  } catch (const fusebox::Error& e) {
    // A printer's own check of its source (generatedSourceProblem) fails as an internal error.
    if (std::string(e.what()).rfind("internal error", 0) == 0) fusebox::fuzz::crash(e.what());
  }
  return 0;
}

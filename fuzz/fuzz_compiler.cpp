// libFuzzer target: the compiler past the loaders. Any text as a .fbx model (its length picks
// inference or training, the partitioner and fusion, so every seed parses as it is) that parses and traces is decomposed, lowered,
// scheduled and printed as C++ and CUDA, or fails with fusebox::Error; the printed source must
// hold no model text outside comments and identifiers (generated_source_check.h). The model's file
// name is hostile on purpose: it reaches every provenance comment.
#include <cstdint>
#include <string>

#include "core/codegen/cuda/cuda_codegen.h"
#include "core/frontend/fbx_parser.h"
#include "core/ir/error.h"
#include "core/pipeline/pipeline.h"
#include "fuzz/fuzz_limits.h"
#include "fuzz/generated_source_check.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fusebox::fuzz::limitMemory();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  fusebox::PipelineConfig cfg;
  cfg.train = size & 1;
  cfg.partitioner = size & 2 ? fusebox::Partitioner::Default : fusebox::Partitioner::MinCut;
  cfg.schedule.fusion = !(size & 4);
  try {
    fusebox::Pipeline p(fusebox::parseModel(text, "fuzz\n#include \"/etc/passwd\" */ ??/ \\.fbx"), cfg);
    p.runAll();
    for (size_t i = 0; i < p.modules().size(); ++i) {
      fusebox::fuzz::checkGeneratedSource(p.modules("cpu")[i].source, fusebox::cpuPrelude());
      fusebox::fuzz::checkGeneratedSource(p.modules("cuda")[i].source, fusebox::cudaPrelude());
    }
  } catch (const fusebox::Error& e) {
    // A printer's own check of its source (generatedSourceProblem) fails as an internal error.
    if (std::string(e.what()).rfind("internal error", 0) == 0) fusebox::fuzz::crash(e.what());
  }
  return 0;
}

// libFuzzer target: any text as a .fbx model must parse and trace, or throw fusebox::Error
// (ParseError / ShapeError with file:line:col), never crash: nesting past kMaxNestingDepth is a
// ParseError, long operator chains trace, sizes past int64 are a ShapeError. run_fuzz.sh seeds
// generated deep and long inputs and allows inputs up to 64 KB (-max_len).
#include <cstdint>
#include <string>

#include "core/frontend/fbx_parser.h"
#include "core/ir/error.h"
#include "core/trace/trace.h"
#include "fuzz/fuzz_limits.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fusebox::fuzz::limitMemory();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    fusebox::ModelDef m = fusebox::parseModel(text, "fuzz.fbx");
    fusebox::trace(m);
  } catch (const fusebox::Error&) {
  }
  return 0;
}

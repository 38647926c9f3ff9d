// The fixed part of every generated CUDA module (see cuda_prelude.cpp).
#pragma once

namespace fusebox {
const char* cudaPrelude();
}

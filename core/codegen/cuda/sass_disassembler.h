// SASS, the GPU's own machine code, of a PTX module: ptxas assembles the PTX for one GPU
// (sm_<compute capability>), then nvdisasm (or cuobjdump) prints its instructions. Both come with
// NVIDIA's CUDA toolkit; they are looked for on the PATH, in $CUDA_HOME/bin and in
// /usr/local/cuda/bin. The tools run as child processes with their arguments as an argv (no
// shell), on files in a private temporary folder, with time and output bounded.
#pragma once

#include <string>

namespace fusebox {

struct SassListing {
  bool ok = false;
  std::string text;  // the SASS, or one line saying what is missing or what failed
};

SassListing disassembleSass(const std::string& ptx, int computeCapability);

}  // namespace fusebox

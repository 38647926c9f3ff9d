#!/usr/bin/env bash
# Builds the GPU benchmark's fusebox in build-gpu/ on a machine with CMake, g++, ninja and CUDA but
# none of Fusebox's Debian packages: core + CUDA backend + CLI with ONNX import (GUI, sessions, LLVM,
# OpenBLAS and tests off). The build log goes to build-gpu.log.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFUSEBOX_WITH_GUI=OFF -DFUSEBOX_WITH_SESSIONS=OFF -DFUSEBOX_WITH_LLVM=OFF \
  -DFUSEBOX_WITH_OPENBLAS=OFF -DBUILD_TESTING=OFF > build-gpu.log
cmake --build build-gpu --parallel >> build-gpu.log

#!/usr/bin/env bash
# GPU benchmark, run on an NVIDIA H200 machine that has CMake, g++, ninja, CUDA and PyTorch but
# none of Fusebox's Debian packages: builds the core + CUDA backend + CLI (GUI, LLVM, OpenBLAS,
# tests off), checks every built-in model on the GPU against the interpreter, then times the four
# workloads with Fusebox CUDA, PyTorch eager and torch.compile in one run. Prints markdown rows.
#   bench/gpu/run.sh [--iters N]
set -euo pipefail
cd "$(dirname "$0")/../.."
ITERS=${2:-30}
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFUSEBOX_WITH_GUI=OFF -DFUSEBOX_WITH_SESSIONS=OFF -DFUSEBOX_WITH_LLVM=OFF \
  -DFUSEBOX_WITH_OPENBLAS=OFF -DBUILD_TESTING=OFF > build-gpu.log
cmake --build build-gpu --parallel >> build-gpu.log
FB=build-gpu/app/fusebox
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "## numerics on the GPU (default dims; outputs and gradients vs the interpreter)"
for m in mlp lenet resnet_block layernorm_gelu gpt2_block softmax_xent mlp_gelu_ln xent_logits; do
  for t in "" "--train"; do
    if out=$($FB run $m --target cuda $t --iters 2 2>&1); then
      worst=$(printf '%s\n' "$out" | sed -n 's/.*max abs diff \([^,]*\),.*/\1/p' | sort -g | tail -1)
      echo "$m ${t:-infer}: ok (worst max abs diff $worst)"
    else
      echo "$m ${t:-infer}: FAILED"; printf '%s\n' "$out" | tail -5
    fi
  done
done
echo
echo "device copy bandwidth (2 GiB copy_, read + write): $(python3 bench/gpu/torch_gpu.py copy) GB/s"
echo
echo "| workload | Fusebox ms | Fusebox kernels | eager ms | compiled ms | compiled / Fusebox | eager kernels | compiled kernels | torch.compile vs eager max err |"
echo "|---|---|---|---|---|---|---|---|---|"
row() {  # name fusebox-model dims flags
  local name=$1 model=$2 dims=$3 flags=$4
  local out ms kern t
  out=$($FB run $model --target cuda $flags $dims --iters "$ITERS" --no-check)
  ms=$(printf '%s\n' "$out" | sed -n 's/^kernels total \([0-9.]*\) ms.*/\1/p')
  kern=$(printf '%s\n' "$out" | sed -n 's/.*; \([0-9]*\) kernels;.*/\1/p')
  read -r e c ek ck err < <(python3 bench/gpu/torch_gpu.py "$name" --iters "$ITERS")
  echo "| $name | $ms | $kern | $e | $c | $(awk -v c="$c" -v f="$ms" 'BEGIN { printf "%.2fx", c / f }') | $ek | $ck | $err |"
  printf '%s\n' "$out" | grep -E "^(forward|backward|inference) " | sort -k3 -g -r | head -6 > "bench-gpu-$name.top" || true
}
row mlp_train mlp_gelu_ln "--dim N=4096" "--train"
row gpt2_block_train gpt2_block "--dim B=8 --dim T=512" "--train"
row layernorm_gelu_infer layernorm_gelu "--dim N=8192 --dim C=4096" ""
row softmax_xent_train xent_logits "--dim N=8192" "--train"
for f in bench-gpu-*.top; do echo "top kernels, ${f#bench-gpu-}:"; cat "$f"; done

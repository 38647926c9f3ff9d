#!/usr/bin/env bash
# GPU benchmark, run on an NVIDIA H100/H200 machine that has CMake, g++, ninja, CUDA and PyTorch
# (torchvision, transformers) but none of Fusebox's Debian packages: builds the core + CUDA backend
# + CLI with ONNX import (bench/gpu/build.sh), checks every built-in model on the GPU against the
# interpreter, then times the workloads with Fusebox CUDA, PyTorch eager and torch.compile in one
# run: four built-in ones, and whole real models exported to ONNX by bench/gpu/real_models.py.
# Fusebox's time is its device time per iteration (CUDA events around each replayed CUDA graph),
# as PyTorch's is (events around the step). Prints markdown rows.
#   bench/gpu/run.sh [--iters N]
set -euo pipefail
cd "$(dirname "$0")/../.."
ITERS=${2:-30}
bash bench/gpu/build.sh
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
echo "| workload | Fusebox ms | Fusebox kernels | Fusebox compile s | eager ms | compiled ms | compiled / Fusebox | eager kernels | compiled kernels | torch.compile s |"
echo "|---|---|---|---|---|---|---|---|---|---|"
fusebox_row() {  # name model flags, then the PyTorch figures: eager compiled eager-kernels compiled-kernels compile-s
  local name=$1 model=$2 flags=$3 e=$4 c=$5 ek=$6 ck=$7 cs=$8
  local out ms kern compile
  # pipeline + NVRTC (whose cache lives in the process), as a user waits for a new model
  out=$($FB run $model --target cuda $flags --iters 1 --no-check)
  compile=$(printf '%s\n' "$out" | sed -n 's/.*: pipeline \([0-9.]*\) ms, compile \([0-9.]*\) ms.*/\1 \2/p' | awk '{ printf "%.1f", ($1 + $2) / 1000 }')
  out=$($FB run $model --target cuda $flags --iters "$ITERS" --no-check)
  ms=$(printf '%s\n' "$out" | sed -n 's/^device \([0-9.]*\) ms.*/\1/p')
  kern=$(printf '%s\n' "$out" | sed -n 's/^CUDA graphs: \([0-9]*\) kernels.*/\1/p')
  echo "| $name | $ms | $kern | $compile | $e | $c | $(awk -v c="$c" -v f="$ms" 'BEGIN { printf "%.2fx", c / f }') | $ek | $ck | $cs |"
  printf '%s\n' "$out" | grep -E "^(forward|backward|inference) " | sort -k3 -g -r | head -6 > "bench-gpu-$name.top" || true
}
row() {  # name fusebox-model dims flags: a built-in workload of bench/gpu/torch_gpu.py
  local e c ek ck err
  read -r e c ek ck err < <(python3 bench/gpu/torch_gpu.py "$1" --iters "$ITERS")
  fusebox_row "$1" "$2" "$4 $3" "$e" "$c" "$ek" "$ck" "-"
}
real_row() {  # name: a whole model of bench/gpu/real_models.py, exported to ONNX
  local e c ek ck cs flags=""
  read -r e c ek ck cs < <(python3 bench/gpu/real_models.py "$1" build-gpu/models --iters "$ITERS")
  case $1 in *_train) flags=--train ;; esac
  fusebox_row "$1" "build-gpu/models/$1.onnx" "$flags" "$e" "$c" "$ek" "$ck" "$cs"
}
row mlp_train mlp_gelu_ln "--dim N=4096" "--train"
row gpt2_block_train gpt2_block "--dim B=8 --dim T=512" "--train"
row layernorm_gelu_infer layernorm_gelu "--dim N=8192 --dim C=4096" ""
row softmax_xent_train xent_logits "--dim N=8192" "--train"
for w in resnet18_infer mobilenet_v2_infer bert_base_infer gpt2_small_train; do real_row $w; done
for f in bench-gpu-*.top; do echo "top kernels, ${f#bench-gpu-}:"; cat "$f"; done

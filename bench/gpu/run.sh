#!/usr/bin/env bash
# GPU benchmark, run on an NVIDIA H100/H200 machine that has CMake, g++, ninja, CUDA and PyTorch
# (torchvision, transformers) but none of Fusebox's Debian packages: builds the core + CUDA backend
# + CLI with ONNX import (bench/gpu/build.sh), checks every built-in model on the GPU against the
# interpreter, then times the workloads with Fusebox CUDA, PyTorch eager and torch.compile in one
# run: four built-in ones, and whole real models exported to ONNX by bench/gpu/real_models.py.
# Fusebox's time is its device time per iteration (CUDA events around each replayed CUDA graph),
# as PyTorch's is (events around the step). Prints markdown rows.
#   bench/gpu/run.sh [--iters N] [PART...]
#   PART: numerics (every built-in model on the GPU against the interpreter), builtin (the four
#   built-in workloads), real (the whole real models), or one workload's name; default all three.
#   Each Fusebox run's whole output is kept in bench-gpu-logs/WORKLOAD.log; a step that fails or
#   runs past its time limit prints FAILED and the run goes on.
set -uo pipefail
cd "$(dirname "$0")/../.."
ITERS=30 PARTS=()
while [ $# -gt 0 ]; do case $1 in --iters) ITERS=$2; shift 2 ;; *) PARTS+=("$1"); shift ;; esac; done
[ ${#PARTS[@]} -gt 0 ] || PARTS=(numerics builtin real)
wants() {  # PART-or-workload...: whether the command line asked for any of them
  local p w
  for p in "${PARTS[@]}"; do for w in "$@"; do [ "$p" = "$w" ] && return 0; done; done
  return 1
}
bash bench/gpu/build.sh || { tail -30 build-gpu.log; exit 1; }
FB=build-gpu/app/fusebox LOGS=bench-gpu-logs
mkdir -p "$LOGS"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if wants numerics; then
  echo "## numerics on the GPU (default dims; outputs and gradients vs the interpreter)"
  for m in mlp lenet resnet_block layernorm_gelu gpt2_block softmax_xent mlp_gelu_ln xent_logits; do
    for t in "" "--train"; do
      if out=$(timeout 120 $FB run $m --target cuda $t --iters 2 2>&1); then
        worst=$(printf '%s\n' "$out" | sed -n 's/.*max abs diff \([^,]*\),.*/\1/p' | sort -g | tail -1)
        echo "$m ${t:-infer}: ok (worst max abs diff $worst; $(printf '%s\n' "$out" | grep -o 'convolutions: [0-9]* of [0-9]*' || true))"
      else
        echo "$m ${t:-infer}: FAILED"; printf '%s\n' "$out" | tail -5
      fi
    done
  done
  echo
fi
wants builtin real mlp_train gpt2_block_train layernorm_gelu_infer softmax_xent_train resnet18_infer mobilenet_v2_infer bert_base_infer \
  gpt2_small_train || exit 0
echo "device copy bandwidth (2 GiB copy_, read + write): $(python3 bench/gpu/torch_gpu.py copy) GB/s"
echo
echo "| workload | Fusebox ms | Fusebox kernels | Fusebox compile s | eager ms | compiled ms | compiled / Fusebox | eager kernels | compiled kernels | torch.compile s | Fusebox max err vs eager | compiled max err vs eager |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
fusebox_row() {  # name model flags, then the PyTorch figures: eager compiled eager-kernels compiled-kernels compile-s compiled-err
  local name=$1 model=$2 flags=$3 e=$4 c=$5 ek=$6 ck=$7 cs=$8 cerr=${9:--} log=$LOGS/$1.log ms kern compile ferr
  # one fresh process: its pipeline + NVRTC time is what a user waits for with a new model
  local t0; t0=$(date +%s.%N)
  if ! timeout 300 $FB run "$model" --target cuda $flags --iters "$ITERS" > "$log" 2>&1; then
    echo "| $name | FAILED (see $log: $(grep -E 'rror|MISMATCH' "$log" | head -1)) | | | $e | $c | | $ek | $ck | $cs | | $cerr |"
    return
  fi
  echo "process wall $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s (load, pipeline, NVRTC, module load, $ITERS iterations)" >> "$log"
  compile=$(sed -n 's/.*: pipeline \([0-9.]*\) ms, compile \([0-9.]*\) ms.*/\1 \2/p' "$log" | awk '{ printf "%.1f", ($1 + $2) / 1000 }')
  ms=$(sed -n 's/^device \([0-9.]*\) ms.*/\1/p' "$log")
  kern=$(sed -n 's/^CUDA graphs: \([0-9]*\) kernels.*/\1/p' "$log")
  ferr=$(sed -n 's/^check .* vs .*output_0.pb: max abs diff \([^,]*\),.*/\1/p' "$log")
  echo "| $name | $ms | $kern | $compile | $e | $c | $(awk -v c="$c" -v f="$ms" 'BEGIN { if (f > 0) printf "%.2fx", c / f }') | $ek | $ck | $cs | ${ferr:--} | $cerr |"
}
row() {  # name fusebox-model dims flags: a built-in workload of bench/gpu/torch_gpu.py
  wants builtin "$1" || return 0
  local e c ek ck err
  read -r e c ek ck err < <(timeout 300 python3 bench/gpu/torch_gpu.py "$1" --iters "$ITERS" || echo FAILED)
  fusebox_row "$1" "$2" "$4 $3 --no-check" "$e" "$c" "$ek" "$ck" "-" "$err"
}
real_row() {  # name: a whole model of bench/gpu/real_models.py, exported to ONNX
  wants real "$1" || return 0
  local e c ek ck cs cerr flags="--data build-gpu/models/$1_data"  # checked against eager's output
  read -r e c ek ck cs cerr < <(timeout 300 python3 bench/gpu/real_models.py "$1" build-gpu/models --iters "$ITERS" 2> "$LOGS/$1.torch.log" || echo FAILED)
  case $1 in *_train) flags="$flags --train" ;; esac
  fusebox_row "$1" "build-gpu/models/$1.onnx" "$flags" "$e" "$c" "$ek" "$ck" "$cs" "$cerr"
}
for w in resnet18_infer mobilenet_v2_infer bert_base_infer gpt2_small_train; do real_row $w; done
row mlp_train mlp_gelu_ln "--dim N=4096" "--train"
row gpt2_block_train gpt2_block "--dim B=8 --dim T=512" "--train"
row layernorm_gelu_infer layernorm_gelu "--dim N=8192 --dim C=4096" ""
row softmax_xent_train xent_logits "--dim N=8192" "--train"
for f in "$LOGS"/*.log; do
  case $f in *.torch.log) continue ;; esac
  echo "top kernels, $(basename "$f" .log):"
  grep -E "^(forward|backward|inference) " "$f" | sort -k3 -g -r | head -6
  grep -E "^(CUDA graphs|device|process wall|model )|convolutions:" "$f"
done

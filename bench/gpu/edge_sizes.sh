#!/usr/bin/env bash
# GPU correctness at edge sizes, run on the H200 machine (same build as bench/gpu/run.sh: no
# Debian packages there): every built-in model trained on the GPU with all of its dims at 1 and
# at 3, and every reproducer in tests/regressions (inference, and training where its comment says
# "train:"), each checked against the interpreter. Prints one line per run; exit 1 on a mismatch.
#   bench/gpu/edge_sizes.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFUSEBOX_WITH_GUI=OFF -DFUSEBOX_WITH_SESSIONS=OFF -DFUSEBOX_WITH_LLVM=OFF \
  -DFUSEBOX_WITH_OPENBLAS=OFF -DBUILD_TESTING=OFF > build-gpu.log || { tail -20 build-gpu.log; exit 2; }
cmake --build build-gpu --parallel >> build-gpu.log || { tail -20 build-gpu.log; exit 2; }
FB=build-gpu/app/fusebox
fail=0
check() {  # label, then fusebox run arguments
  local label=$1 out
  shift
  if out=$($FB run "$@" --target cuda --iters 1 2>&1) && ! printf '%s\n' "$out" | grep -q MISMATCH; then
    echo "ok        $label"
  else
    echo "FAILED    $label"; printf '%s\n' "$out" | grep -E 'MISMATCH|rror' | head -5; fail=1
  fi
}
declare -A DIMS=([mlp]="B" [lenet]="B" [resnet_block]="B" [layernorm_gelu]="N C" [gpt2_block]="B T"
                 [softmax_xent]="N" [mlp_gelu_ln]="N" [xent_logits]="N")
for m in mlp lenet resnet_block layernorm_gelu gpt2_block softmax_xent mlp_gelu_ln xent_logits; do
  for size in 1 3; do
    args=()
    for d in ${DIMS[$m]}; do args+=(--dim "$d=$size"); done
    check "$m --train dims=$size" "$m" --train "${args[@]}"
  done
done
for f in tests/regressions/*.fbx; do
  check "$(basename "$f") infer" "$f"
  if grep -q 'train:' "$f"; then
    check "$(basename "$f") train mincut" "$f" --train
    check "$(basename "$f") train default" "$f" --train --partitioner default
  fi
done
exit $fail

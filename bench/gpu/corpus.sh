#!/usr/bin/env bash
# The real-model corpus (tests/models/corpus: torchvision, timm, transformers, torch exports by both
# ONNX exporters) on the GPU: each model's inference and training step against the interpreter.
#   bench/gpu/corpus.sh [FUSEBOX]   (default build-gpu/app/fusebox, made by bench/gpu/build.sh)
set -uo pipefail
cd "$(dirname "$0")/../.."
FB=${1:-build-gpu/app/fusebox}
for dir in tests/models/corpus/test_*/; do
  name=$(basename "$dir")
  for t in "" "--train"; do
    if out=$(timeout 300 "$FB" run "$dir/model.onnx" --target cuda $t --iters 2 2>&1); then
      worst=$(printf '%s\n' "$out" | sed -n 's/.*max abs diff \([^,]*\),.*/\1/p' | sort -g | tail -1)
      kern=$(printf '%s\n' "$out" | sed -n 's/.*; \([0-9]*\) kernels;.*/\1/p')
      echo "$name ${t:-infer}: ok ($kern kernels, worst max abs diff $worst)"
    else
      echo "$name ${t:-infer}: FAILED: $(printf '%s\n' "$out" | grep -E 'MISMATCH|rror' | head -3 | tr '\n' ' ')"
    fi
  done
done

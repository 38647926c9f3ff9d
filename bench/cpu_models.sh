#!/usr/bin/env bash
# Real models on the CPU: Fusebox vs onnxruntime-node, same inputs, same thread count, passive
# waiting for both; median of ROUNDS rounds. Also Fusebox's training step, and its compile time cold
# (empty object cache) and warm (second process, cache filled). Prints a Markdown table.
#   bench/cpu_models.sh [--threads N] [--iters N] [--rounds N] [CASE_DIR...]
# CASE_DIRs default to tests/models/corpus/*_ts and *_dynamo (ONNX test-case layout). onnxruntime:
# `npm install --ignore-scripts onnxruntime-node` in a folder named by ORT_NODE_MODULES (its
# node_modules; default /work/ortnode/node_modules).
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=2 ITERS=100 ROUNDS=5
cases=()
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) THREADS=$2; shift 2 ;;
    --iters) ITERS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    -*) echo "usage: bench/cpu_models.sh [--threads N] [--iters N] [--rounds N] [CASE_DIR...]" >&2; exit 2 ;;
    *) cases+=("$1"); shift ;;
  esac
done
[ ${#cases[@]} -gt 0 ] || cases=(tests/models/corpus/test_*)
FUSEBOX=build/app/fusebox
export NODE_PATH=${ORT_NODE_MODULES:-/work/ortnode/node_modules} OMP_WAIT_POLICY=passive
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
fusebox_ms() {  # MODEL [--train]: median step ms over ROUNDS processes (cache warm after the first)
  for _ in $(seq "$ROUNDS"); do
    FUSEBOX_CACHE_DIR=$cache $FUSEBOX run "$1" --target cpu --threads "$THREADS" --iters "$ITERS" ${2:-} | sed -n 's/.*step \([0-9.]*\) ms\/iter.*/\1/p'
  done | median
}
compile_ms() { sed -n 's/.*compile \([0-9.]*\) ms.*/\1/p'; }
echo "| model | ORT ms | Fusebox ms | ORT / Fusebox | Fusebox train ms | compile cold ms | compile warm ms | ORT session ms |"
echo "|---|---|---|---|---|---|---|---|"
for dir in "${cases[@]}"; do
  model=$dir/model.onnx
  name=$(basename "$dir"); name=${name#test_}
  rm -rf "$cache"/*
  cold=$(FUSEBOX_CACHE_DIR=$cache $FUSEBOX run "$model" --target cpu --iters 1 | compile_ms)
  warm=$(FUSEBOX_CACHE_DIR=$cache $FUSEBOX run "$model" --target cpu --iters 1 | compile_ms)
  fb=$(fusebox_ms "$model")
  train=$(fusebox_ms "$model" --train)
  read -r ort create < <(for _ in 1; do node bench/ort_time.js "$dir" "$THREADS" "$ITERS" "$ROUNDS"; done)
  ratio=$(awk -v o="$ort" -v f="$fb" 'BEGIN { printf "%.2f", o / f }')
  echo "| $name | $ort | $fb | **${ratio}x** | $train | $cold | $warm | $create |"
done

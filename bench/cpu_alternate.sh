#!/usr/bin/env bash
# onnxruntime and two Fusebox binaries on the same full-size models, alternating model by model
# and round by round, so that a machine whose speed drifts (shared vCPUs: 20-50% within minutes)
# moves all three alike. Prints Markdown rows: median ms of each, and ORT / Fusebox for both.
#   bench/cpu_alternate.sh FUSEBOX_A FUSEBOX_B THREADS ROUNDS ITERS CASE_DIR...
# CASE_DIRs as bench/cpu_models.sh takes them (ONNX test-case layout: model.onnx, test_data_set_0).
# onnxruntime: `npm install --ignore-scripts onnxruntime-node` in the folder ORT_NODE_MODULES names
# (its node_modules; default /work/ortnode/node_modules); passive waiting for every peer.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 6 ] || { echo "usage: bench/cpu_alternate.sh FUSEBOX_A FUSEBOX_B THREADS ROUNDS ITERS CASE_DIR..." >&2; exit 2; }
A=$1 B=$2 THREADS=$3 ROUNDS=$4 ITERS=$5
shift 5
export NODE_PATH=${ORT_NODE_MODULES:-/work/ortnode/node_modules} OMP_WAIT_POLICY=passive
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
fusebox_ms() {  # BINARY CASE_DIR
  "$1" run "$2/model.onnx" --target cpu --threads "$THREADS" --iters "$ITERS" --no-check | sed -n 's/.*step \([0-9.]*\) ms\/iter.*/\1/p'
}
echo "| model | threads | ORT ms | A ms | B ms | ORT / A | ORT / B |"
echo "|---|---|---|---|---|---|---|"
for dir in "$@"; do
  ort=() a=() b=()
  for _ in $(seq "$ROUNDS"); do
    ort+=("$(node bench/ort_time.js "$dir" "$THREADS" "$ITERS" 1 | awk '{ print $1 }')")
    a+=("$(fusebox_ms "$A" "$dir")")
    b+=("$(fusebox_ms "$B" "$dir")")
  done
  o=$(median "${ort[@]}") ma=$(median "${a[@]}") mb=$(median "${b[@]}")
  name=$(basename "$dir"); name=${name#test_}
  echo "| $name | $THREADS | $o | $ma | $mb | $(awk -v o="$o" -v a="$ma" -v b="$mb" 'BEGIN { printf "%.2fx | %.2fx", o / a, o / b }') |"
done

#!/usr/bin/env bash
# Real models on the CPU: Fusebox vs onnxruntime-node vs PyTorch eager, same inputs, same thread
# count, passive waiting for all; median of ROUNDS rounds. Inference and the training step (Fusebox
# and eager: forward, then backward from a seeded output gradient, weight gradients only). Compile
# time three ways: cold (empty object cache: the runtime library and the kernels), new model (the
# runtime library cached, as on any machine that ran Fusebox before: the kernels only) and warm
# (second process: nothing compiled). Prints a Markdown table.
#   bench/cpu_models.sh [--threads N] [--iters N] [--rounds N] [CASE_DIR...]
# CASE_DIRs default to tests/models/corpus/test_* (ONNX test-case layout). The full-size models of
# issue 19: `bench/real_models/full_size.py export DIR` (Debian's python3-torch/-torchvision), then
# `bench/cpu_models.sh DIR/test_*`; PyTorch eager is timed for the models full_size.py knows (the
# corpus's timm/transformers models need those libraries: "-"). onnxruntime: `npm install
# --ignore-scripts onnxruntime-node` in a folder named by ORT_NODE_MODULES (its node_modules;
# default /work/ortnode/node_modules).
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
    FUSEBOX_CACHE_DIR=$cache $FUSEBOX run "$1" --target cpu --threads "$THREADS" --iters "$ITERS" --no-check ${2:-} | sed -n 's/.*step \([0-9.]*\) ms\/iter.*/\1/p'
  done | median
}
compile_ms() { sed -n 's/.*compile \([0-9.]*\) ms.*/\1/p'; }
eager_ms() {  # MODEL_NAME [--train]: PyTorch eager on the same model, or "-" where full_size.py lacks it
  /usr/bin/python3 bench/real_models/full_size.py time "$1" ${2:-} --threads "$THREADS" --iters "$ITERS" --rounds "$ROUNDS" 2>/dev/null || echo "-"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2fx", a / b }'; }
echo "| model | ORT ms | Fusebox ms | ORT / Fusebox | eager ms | eager / Fusebox | Fusebox train ms | eager train ms | eager / Fusebox train | compile cold ms | compile new model ms | compile warm ms | ORT session ms |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for dir in "${cases[@]}"; do
  model=$dir/model.onnx
  name=$(basename "$dir"); name=${name#test_}
  rm -rf "${cache:?}"/*
  out=$(FUSEBOX_CACHE_DIR=$cache $FUSEBOX run "$model" --target cpu --iters 1)  # also checked against the interpreter, once
  cold=$(compile_ms <<< "$out")
  grep -q MISMATCH <<< "$out" && name="$name (MISMATCH)"
  rm -rf "${cache:?}"/*
  FUSEBOX_CACHE_DIR=$cache $FUSEBOX run softmax_xent --target cpu --iters 1 --no-check >/dev/null  # the runtime library only
  fresh=$(FUSEBOX_CACHE_DIR=$cache $FUSEBOX run "$model" --target cpu --iters 1 --no-check | compile_ms)
  warm=$(FUSEBOX_CACHE_DIR=$cache $FUSEBOX run "$model" --target cpu --iters 1 --no-check | compile_ms)
  fb=$(fusebox_ms "$model")
  train=$(fusebox_ms "$model" --train)
  base=${name%_ts}; base=${base%_dynamo}
  eager=$(eager_ms "$base")
  eager_train=$(eager_ms "$base" --train)
  read -r ort create < <(node bench/ort_time.js "$dir" "$THREADS" "$ITERS" "$ROUNDS")
  echo "| $name | $ort | $fb | **$(ratio "$ort" "$fb")** | $eager | $(ratio "$eager" "$fb") | $train | $eager_train | **$(ratio "$eager_train" "$train")** | $cold | $fresh | $warm | $create |"
done

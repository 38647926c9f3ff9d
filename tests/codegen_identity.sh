#!/usr/bin/env bash
# Generated code must not change by accident: hashes the generated C++ and CUDA of every built-in
# model and every tests/regressions reproducer, in every config (inference; training with each
# partitioner; fusion on and off), and compares them with tests/golden/codegen_hashes.txt.
# A refactor must leave them byte-identical; a change that means to alter generated code
# rewrites the file (--write) in the same commit, so the diff shows which programs changed.
#   tests/codegen_identity.sh FUSEBOX [--write]
set -euo pipefail
FB=$(realpath "$1")
cd "$(dirname "$0")/.."
GOLDEN=tests/golden/codegen_hashes.txt
actual=$(mktemp)
trap 'rm -f "$actual"' EXIT
models=$("$FB" models | awk '{print $1}')
for m in $models tests/regressions/*.fbx; do
  cfgs=("" "--no-fusion")
  # reproducers train only when their comment says so (the others may have no parameter)
  if [[ $m != *.fbx ]] || grep -q 'train:' "$m"; then
    cfgs+=("--train" "--train --no-fusion" "--train --partitioner default" "--train --partitioner default --no-fusion")
  fi
  for cfg in "${cfgs[@]}"; do
    for stage in codegen cuda; do
      # shellcheck disable=SC2086  # cfg is a list of flags
      h=$("$FB" dump "$m" --stage $stage $cfg | sha256sum | cut -c1-16)
      echo "$m | ${cfg:-infer} | $stage | $h"
    done
  done
done > "$actual"
if [[ ${2:-} == --write ]]; then
  cp "$actual" "$GOLDEN"
  echo "wrote $(wc -l < "$GOLDEN") hashes to $GOLDEN"
  exit 0
fi
if ! diff -u "$GOLDEN" "$actual"; then
  echo "generated code differs from $GOLDEN (lines above: - expected, + now)."
  echo "If the change is meant, run: tests/codegen_identity.sh build/app/fusebox --write"
  exit 1
fi
echo "$(wc -l < "$actual") generated modules identical"

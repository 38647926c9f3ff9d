#!/usr/bin/env bash
# Fusebox's own blocked matmul (the CPU extern) against OpenBLAS sgemm, same shapes and thread
# count, in one run. Needs libopenblas-dev (bench only; Fusebox itself does not link OpenBLAS).
#   [FUSEBOX=path/to/fusebox] bench/matmul.sh [--threads N]
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${2:-2}
FUSEBOX=${FUSEBOX:-build/app/fusebox}  # e.g. a build configured with -DFUSEBOX_WITH_OPENBLAS=OFF for the own kernel
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 bench/sgemm_openblas.c -o "$tmp/sgemm" -lopenblas
echo "| n x k x m | Fusebox ms | OpenBLAS ms | OpenBLAS / Fusebox |"
echo "|---|---|---|---|"
for shape in "256 784 256" "1024 768 2304" "1024 1024 1024" "4096 1024 1024"; do
  set -- $shape
  cat > "$tmp/mm.fbx" <<FBX
model mm(a: f32[$1, $2], b: f32[$2, $3]) {
  return matmul(a, b)
}
FBX
  fb=$("$FUSEBOX" run "$tmp/mm.fbx" --target cpu --iters 10 --threads "$THREADS" | sed -n 's/^inference  *extern0_matmul  *\([0-9.]*\).*/\1/p')
  ob=$(OPENBLAS_NUM_THREADS=$THREADS "$tmp/sgemm" "$1" "$2" "$3" 10)
  echo "| $1 x $2 x $3 | $fb | $ob | $(awk -v o="$ob" -v f="$fb" 'BEGIN { printf "%.2fx", o / f }') |"
done

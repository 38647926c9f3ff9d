#!/usr/bin/env bash
# CPU benchmark: every built-in model through the reference interpreter, Fusebox compiled (cpu
# target) and PyTorch eager (Debian's python3-torch), same shapes, same thread count, in one run.
# Writes the table to bench/RESULTS.md (the CPU section) and prints it.
#   bench/cpu.sh [--threads N] [--iters N]
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=2
ITERS=20
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) THREADS=$2; shift 2 ;;
    --iters) ITERS=$2; shift 2 ;;
    *) echo "usage: bench/cpu.sh [--threads N] [--iters N]" >&2; exit 2 ;;
  esac
done
FUSEBOX=build/app/fusebox
PY=/usr/bin/python3
if ! $PY -c "import torch" 2>/dev/null; then
  echo "bench/cpu.sh: PyTorch eager needs Debian's python3-torch: apt-get install python3-torch" >&2
  exit 1
fi
# Shapes: large enough that kernels, not Python or launch overhead, dominate.
declare -A DIMS=(
  [mlp]="--dim B=256" [lenet]="--dim B=64" [resnet_block]="--dim B=32" [layernorm_gelu]="--dim N=2048 --dim C=1024"
  [gpt2_block]="--dim B=2 --dim T=128" [softmax_xent]="--dim N=1024"
)
MODELS="layernorm_gelu softmax_xent mlp gpt2_block lenet resnet_block"
ms_of() { sed -n 's/.*step \([0-9.]*\) ms\/iter.*/\1/p'; }
rows=""
for mode in infer train; do
  flag=""
  [ "$mode" = train ] && flag="--train"
  for m in $MODELS; do
    dims=${DIMS[$m]}
    fb=$($FUSEBOX run "$m" --target cpu $flag --iters "$ITERS" --threads "$THREADS" $dims | ms_of)
    fb_unfused=$($FUSEBOX run "$m" --target cpu $flag --iters "$ITERS" --threads "$THREADS" --no-fusion $dims | ms_of)
    eager=$($PY bench/torch_cpu.py "$m" $flag --iters "$ITERS" --threads "$THREADS" $dims)
    interp=""
    if [ "$mode" = infer ]; then
      interp=$($FUSEBOX run "$m" --target interp --iters 1 $dims | sed -n 's/.*interp: \([0-9.]*\) ms.*/\1/p')
    fi
    pipe=$($FUSEBOX dump "$m" $flag --stage decompose --stats $dims | sed -n 's/^stage times: //p')
    ratio=$(awk -v e="$eager" -v f="$fb" 'BEGIN { printf "%.2f", e / f }')
    fusion=$(awk -v u="$fb_unfused" -v f="$fb" 'BEGIN { printf "%.2f", u / f }')
    irow=$( [ -n "$interp" ] && awk -v i="$interp" -v f="$fb" 'BEGIN { printf "%.1f ms (%.0fx)", i, i / f }' || echo "-")
    rows+="| $m | $mode | ${dims//--dim /} | $fb | $fb_unfused | $eager | **${ratio}x** | ${fusion}x | $irow |"$'\n'
    echo "$m $mode: fusebox $fb ms, unfused $fb_unfused ms, eager $eager ms (eager/fusebox ${ratio}x)" >&2
  done
done
gpt2pipe=$($FUSEBOX dump gpt2_block --train --stage decompose --stats | sed -n 's/^stage times: //p')
table="## CPU (bench/cpu.sh)

Measured $(date -u +%Y-%m-%d) on this machine ($(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $THREADS threads for both, $ITERS timed iterations after warm-up, PyTorch $($PY -c 'import torch; print(torch.__version__)') eager (Debian python3-torch). Times are wall-clock ms per iteration of the whole step (inference: forward; train: forward + backward). Ratios are taken within this one run; the machine is shared, so read them as +-10%.

Command: \`bench/cpu.sh --threads $THREADS --iters $ITERS\`

| model | mode | dims | Fusebox ms | Fusebox unfused ms | PyTorch eager ms | eager / Fusebox | unfused / fused | interpreter |
|---|---|---|---|---|---|---|---|---|
$rows
Pipeline time, trace to prims, GPT-2 block training step at its default dims: $gpt2pipe (lower, schedule and codegen add about 1-3 ms more; see \`fusebox run\`, which prints the whole pipeline time).
"
printf '%s\n' "$table"
python3 - "$table" <<'PY'
import re, sys, pathlib
path = pathlib.Path("bench/RESULTS.md")
text = path.read_text() if path.exists() else "# Benchmark results\n"
section = sys.argv[1].rstrip() + "\n"
if "## CPU (bench/cpu.sh)" in text:
    text = re.sub(r"## CPU \(bench/cpu.sh\).*?(?=\n## |\Z)", lambda m: section, text, flags=re.S)
else:
    text = text.rstrip() + "\n\n" + section
path.write_text(text)
PY

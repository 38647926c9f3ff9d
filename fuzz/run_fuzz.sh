#!/usr/bin/env bash
# Runs one fuzz target for a bounded time from a fresh corpus seeded with real models:
#   run_fuzz.sh TARGET WORKDIR SECONDS NAME_PATTERN SEED_DIR...
# (every file matching NAME_PATTERN under the SEED_DIRs is a seed). A crash, leak, sanitizer
# report or timeout makes libFuzzer exit non-zero and leaves the input in WORKDIR/crash-*
# (or leak-*, timeout-*); `TARGET WORKDIR/crash-...` reproduces it. FUZZ_SEED (default 1, what
# CI runs) picks libFuzzer's seed, to search further from the same corpus.
set -euo pipefail
target=$1 work=$2 seconds=$3 pattern=$4
shift 4
rm -rf "$work"
mkdir -p "$work/corpus"
n=0
while IFS= read -r f; do
  cp "$f" "$work/corpus/seed_$n"
  n=$((n + 1))
done < <(find "$@" -name "$pattern" -type f 2>/dev/null | sort)
# .fbx: generated seeds at and past the nesting limit (kMaxNestingDepth, 256) and long flat chains,
# so the fuzzer starts next to the depth and scale checks instead of having to grow 5,000 '(' itself.
if [[ $pattern == *.fbx ]]; then
  rep() { local s=$1 k=$2; printf -- "$s%.0s" $(seq "$k"); }
  gen() { printf 'model deep(x: f32[2, 3]) {\n%s\n}\n' "$2" >"$work/corpus/gen_$1"; n=$((n + 1)); }
  gen parens_255 "  return $(rep '(' 255)x$(rep ')' 255)"
  gen parens_5000 "  return $(rep '(' 5000)x$(rep ')' 5000)"
  gen calls_300 "  return $(rep 'relu(' 300)x$(rep ')' 300)"
  gen negate_300 "  return $(rep '- ' 300)x"
  gen lists_300 "  return sum($(rep '[' 300)x$(rep ']' 300))"
  gen sum_4000 "  return x$(rep ' + x' 4000)"
  gen product_4000 "  return x$(rep ' * 1.0' 4000)"
  gen scopes_300 "$(rep 'scope s { ' 300)param w: f32[3] = zeros$(rep ' }' 300)
  return x"
  gen statements_2000 "  h = relu(x)
$(rep '  h = relu(h)\n' 2000)  return h"
  gen dims_overflow "  param w: f32[999999999999, 999999999999, 999999999999] = zeros
  return x"
fi
echo "seeded $n inputs"
cd "$work"
# -max_len 64 KB: long enough for nesting and chains past every limit (libFuzzer's default is the
# largest seed, which would cap mutations of the small real models at a few hundred bytes).
exec "$target" -max_total_time="$seconds" -seed=${FUZZ_SEED:-1} -rss_limit_mb=2560 -timeout=20 -max_len=65536 -print_final_stats=1 corpus

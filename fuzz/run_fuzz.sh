#!/usr/bin/env bash
# Runs one fuzz target for a bounded time from a fresh corpus seeded with real models:
#   run_fuzz.sh TARGET WORKDIR SECONDS NAME_PATTERN SEED_DIR...
# (every file matching NAME_PATTERN under the SEED_DIRs is a seed). A crash, leak, sanitizer
# report or timeout makes libFuzzer exit non-zero and leaves the input in WORKDIR/crash-*
# (or leak-*, timeout-*); `TARGET WORKDIR/crash-...` reproduces it.
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
echo "seeded $n inputs"
cd "$work"
exec "$target" -max_total_time="$seconds" -seed=1 -rss_limit_mb=2560 -timeout=20 -print_final_stats=1 corpus

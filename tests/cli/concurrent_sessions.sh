#!/bin/sh
# concurrent_sessions.sh FUSEBOX WORKDIR N: N `fusebox compile` processes started at once on a
# session file that does not exist yet must all be recorded (N sessions, ids 1..N, none lost).
set -u
fusebox=$1 work=$2 n=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
file=$work/new.fbs
i=1
pids=""
while [ "$i" -le "$n" ]; do
  "$fusebox" compile mlp --until schedule --session "$file" > "$work/out$i.txt" 2>&1 &
  pids="$pids $!"
  i=$((i + 1))
done
failed=0
for pid in $pids; do wait "$pid" || failed=$((failed + 1)); done
cat "$work"/out*.txt | grep -E "recorded as session|rror" | sort
ids=$(cat "$work"/out*.txt | sed -n 's/^recorded as session \([0-9]*\) in .*/\1/p' | sort -n | tr '\n' ' ')
expected=$(seq 1 "$n" | tr '\n' ' ')
[ "$failed" -eq 0 ] || { echo "concurrent: $failed of $n writers failed" >&2; exit 1; }
[ "$ids" = "$expected" ] || { echo "concurrent: recorded ids '$ids', wanted '$expected'" >&2; exit 1; }
"$fusebox" report "$file" --id "$n" -o "$work/report.html" || exit 1
echo "all $n concurrent writers recorded"

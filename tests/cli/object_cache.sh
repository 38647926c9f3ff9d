#!/bin/sh
# object_cache.sh FUSEBOX WORKDIR: a second process compiling the same model is served from the
# on-disk object cache ("(cached)") with the same numbers; a damaged cache file is recompiled,
# never trusted; FUSEBOX_CACHE_DIR=off compiles every time and writes nothing.
set -u
fusebox=$1 work=$2
rm -rf "$work" && mkdir -p "$work" || exit 1
export FUSEBOX_CACHE_DIR="$work/cache"
run() { "$fusebox" run resnet_block --target cpu --train --iters 1 --dim B=3; }
run > "$work/first.txt" || exit 1
grep -q "(cached)" "$work/first.txt" && { echo "first run was served from an empty cache" >&2; exit 1; }
run > "$work/second.txt" || exit 1
grep -q "compile .* ms (cached)" "$work/second.txt" || { echo "second run compiled again" >&2; cat "$work/second.txt"; exit 1; }
grep "vs interpreter" "$work/first.txt" > "$work/a" && grep "vs interpreter" "$work/second.txt" > "$work/b" && cmp "$work/a" "$work/b" || exit 1
for f in "$work"/cache/cpu/*.fbo; do head -c 300 "$f" > "$f.part" && mv "$f.part" "$f"; done
run > "$work/third.txt" || exit 1
grep -q "(cached)" "$work/third.txt" && { echo "a truncated cache file was used" >&2; exit 1; }
grep -q "ok$" "$work/third.txt" || exit 1
# A module large enough to be compiled in partitions (one object per core, stored as one entry):
# served from the cache by a second process with the same numbers.
big() { "$fusebox" run "$(dirname "$0")/../models/corpus/test_timm_efficientnet_ts/model.onnx" --target cpu --train --iters 1; }
big > "$work/big1.txt" || exit 1
big > "$work/big2.txt" || exit 1
grep -q "compile .* ms (cached)" "$work/big2.txt" || { echo "the partitioned module compiled again" >&2; cat "$work/big2.txt"; exit 1; }
grep "vs interpreter" "$work/big1.txt" > "$work/a" && grep "vs interpreter" "$work/big2.txt" > "$work/b" && cmp "$work/a" "$work/b" || exit 1
grep -q MISMATCH "$work/big2.txt" && exit 1
before=$(ls "$work/cache/cpu")
FUSEBOX_CACHE_DIR=off "$fusebox" run mlp --target cpu --iters 1 > "$work/off.txt" || exit 1
[ "$(ls "$work/cache/cpu")" = "$before" ] || { echo "FUSEBOX_CACHE_DIR=off wrote to the cache" >&2; exit 1; }
echo "second process served from the cache; damaged entries recompiled"

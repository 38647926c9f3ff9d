#!/bin/sh
# make_session_seeds.sh DIR: a few inputs for fuzz_session_report (its value encoding: one length
# byte, then the bytes), so the fuzzer starts from sessions with a graph, code and a profile.
set -eu
dir=$1
mkdir -p "$dir"
v() { printf "\\$(printf '%03o' ${#1})%s" "$1"; }
{ v mlp; v "train target=cpu"; v cpu; v 2026-01-01T00:00:00Z
  v trace; v traced; v dot; v 'digraph g { n1 [label="add\nf32[4]", tooltip="t"]; subgraph cluster_k { label="k0"; n1; } n1 -> n2; }'; v 1.5
  v forward; v 1; v 2; v vertical; v 1; v "fused: 4 KB saved"; v 4096
  v forward; v 0; v kernel0; v "1,2"; v "3"; v 8192
  v forward; v cpp; v 'void kernel0() {}'
  v forward; v cpu; v 1; v "clang/LLVM -O3"; v 12.5
  v 1; v forward; v kernel0; v 0; v 0.25; v 8192; v 0.125; v 0.0625
  v forward; v 0; v 1; v add; v 1
  v forward; v "for i in 0..4: t3[i] = t1[i] + t2[i]"; v 8192; v "4096,8192"; v "4096,4096"; } > "$dir/seed_session"
{ v "<script>alert(1)</script>"; v "a&b"; v cpu; v now
  v schedule; v forward; v dot; v 'digraph g { a [URL="javascript:x", label=<<b>x</b>>]; a -> b; }'; v 1; } > "$dir/seed_hostile"

#!/bin/sh
# gen_limit_models.sh DIR: writes the crafted inputs of the cli.limits / cli.error tests of model
# loading into DIR (generated here, not checked in): nesting past the limit, a long flat sum,
# 20,000 statements, dims overflowing int64, and FIFOs named like models.
set -e
dir=$1
rm -rf "$dir"
mkdir -p "$dir"
rep() { printf -- "$1%.0s" $(seq "$2"); }
printf 'model deep(x: f32[2, 3]) {\n  return %sx%s\n}\n' "$(rep '(' 5000)" "$(rep ')' 5000)" >"$dir/deep_parens.fbx"
printf 'model deep(x: f32[2, 3]) {\n%s\n  param w: f32[3] = zeros\n%s\n  return x\n}\n' "$(rep 'scope s {\n' 10000)" "$(rep '}\n' 10000)" >"$dir/deep_scopes.fbx"
printf 'model sum4000(x: f32[2, 3]) {\n  return x%s\n}\n' "$(rep ' + x' 3999)" >"$dir/sum_4000.fbx"
printf 'model chain(x: f32[2, 3]) {\n  h = relu(x)\n%s\n  return h\n}\n' "$(rep '  h = relu(h)\n' 19999)" >"$dir/chain_20000.fbx"
printf 'model big(x: f32[999999999999, 999999999999, 999999999999]) {\n  return relu(x)\n}\n' >"$dir/overflow_dims.fbx"
mkfifo "$dir/pipe.fbx" "$dir/pipe.onnx"

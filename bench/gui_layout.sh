#!/usr/bin/env bash
# Layout of a large joint graph, as the GUI's graph view gets it: a deep residual MLP (LAYERS
# blocks of linear, layer_norm, gelu, residual add) traced for training, its joint graph written
# as dot, and laid out by Graphviz's dot engine (the engine the GUI calls in process through
# libgvc). Prints the node count and the layout time.
#   bench/gui_layout.sh [LAYERS]   (default 60: about 3,000 joint-graph nodes)
set -euo pipefail
cd "$(dirname "$0")/.."
LAYERS=${1:-60}
FB=${FUSEBOX:-build/app/fusebox}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
  echo "model deep(x: f32[B, 64]) dims(B = 8) {"
  echo "  h0 = x"
  for i in $(seq 1 "$LAYERS"); do
    p=$((i - 1))
    echo "  scope block$i {"
    echo "    param w: f32[64, 64] = randn(seed=$i, std=0.05)"
    echo "    param b: f32[64] = zeros"
    echo "    param g: f32[64] = ones"
    echo "    param beta: f32[64] = zeros"
    echo "    h$i = h$p + gelu(layer_norm(linear(h$p, w, b), [64], g, beta))"
    echo "  }"
  done
  echo "  return sum(h$LAYERS * h$LAYERS)"
  echo "}"
} > "$tmp/deep.fbx"
"$FB" dump "$tmp/deep.fbx" --train --stage joint --format dot > "$tmp/joint.dot"
nodes=$(grep -c 'label=' "$tmp/joint.dot")
start=$(date +%s.%N)
dot -Tplain "$tmp/joint.dot" > /dev/null
end=$(date +%s.%N)
echo "joint graph of $LAYERS blocks: $nodes nodes, Graphviz dot layout $(echo "$end - $start" | bc) s"

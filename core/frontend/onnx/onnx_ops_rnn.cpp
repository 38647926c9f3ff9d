// ONNX's recurrent layers (RNN, GRU, LSTM) as registry ops, unrolled over the static sequence
// length in the forward, reverse or both directions. One matmul projects every step's input at
// once; each step is then one matmul of the hidden state and the gate math, as PyTorch's fused
// cells compute it. sequence_lens (constant or an input) masks the steps past a sequence's end:
// its state is held and its outputs are zero, which the reverse direction needs too, since it
// starts at each sequence's own last step.

#include <cmath>

#include "core/frontend/onnx/onnx_ops.h"
#include "core/ir/error.h"

namespace fusebox {

namespace {

using Ints = std::vector<int64_t>;

// One activation function of the `activations` attribute with its alpha and beta.
struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
};

// The activations ONNX allows in recurrent layers: how many of alpha/beta each takes, their
// defaults, and the composition of registry ops.
struct ActivationKind {
  const char* name;
  int params;  // 0, 1 (alpha) or 2 (alpha and beta)
  double alpha, beta;
  ValueId (*apply)(OnnxNode& c, ValueId x, double alpha, double beta);
};

const std::vector<ActivationKind>& activationKinds() {
  static const std::vector<ActivationKind> kinds = {
      {"Sigmoid", 0, 0, 0, [](OnnxNode& c, ValueId x, double, double) { return c.emit("sigmoid", {x}); }},
      {"Tanh", 0, 0, 0, [](OnnxNode& c, ValueId x, double, double) { return c.emit("tanh", {x}); }},
      {"Relu", 0, 0, 0, [](OnnxNode& c, ValueId x, double, double) { return c.emit("relu", {x}); }},
      {"Softsign", 0, 0, 0,
       [](OnnxNode& c, ValueId x, double, double) {
         return c.emit("div", {x, c.emit("add", {c.emit("abs", {x}), c.scalar(1, c.dtype(x))})});
       }},
      {"Softplus", 0, 0, 0, [](OnnxNode& c, ValueId x, double, double) { return onnxSoftplus(c, x); }},
      {"Elu", 1, 1.0, 0, [](OnnxNode& c, ValueId x, double a, double) { return onnxElu(c, x, a); }},
      {"LeakyRelu", 1, 0.01, 0,
       [](OnnxNode& c, ValueId x, double a, double) {
         DType t = c.dtype(x);
         return c.emit("where", {c.emit("gt", {x, c.scalar(0, t)}), x, c.emit("mul", {x, c.scalar(a, t)})});
       }},
      {"ThresholdedRelu", 1, 1.0, 0,
       [](OnnxNode& c, ValueId x, double a, double) {
         DType t = c.dtype(x);
         return c.emit("where", {c.emit("gt", {x, c.scalar(a, t)}), x, c.scalar(0, t)});
       }},
      {"Affine", 2, 1.0, 0.0,
       [](OnnxNode& c, ValueId x, double a, double b) {
         DType t = c.dtype(x);
         return c.emit("add", {c.emit("mul", {x, c.scalar(a, t)}), c.scalar(b, t)});
       }},
      {"ScaledTanh", 2, 1.0, 1.0,
       [](OnnxNode& c, ValueId x, double a, double b) {
         DType t = c.dtype(x);
         return c.emit("mul", {c.emit("tanh", {c.emit("mul", {x, c.scalar(b, t)})}), c.scalar(a, t)});
       }},
      {"HardSigmoid", 2, 0.2, 0.5,
       [](OnnxNode& c, ValueId x, double a, double b) {
         DType t = c.dtype(x);
         return onnxClamp(c, c.emit("add", {c.emit("mul", {x, c.scalar(a, t)}), c.scalar(b, t)}), 0, 1);
       }},
  };
  return kinds;
}

const ActivationKind& activationKind(const std::string& name) {
  for (const ActivationKind& k : activationKinds())
    if (k.name == name) return k;
  throw OnnxUnsupported("activation '" + name + "' is not supported in a recurrent layer");
}

// The layer's attributes and inputs, read once.
struct Recurrent {
  int gates = 1;            // 1 (RNN), 3 (GRU), 4 (LSTM)
  int64_t hidden = 0, seq = 0, batch = 0, dirs = 1;
  bool reverseOnly = false, batchFirst = false, linearBeforeReset = false;
  std::optional<double> clip;
  std::vector<Activation> acts;  // per direction: gates' f, g (and h for LSTM)
  ValueId x = kNoId;                   // [seq, batch, input]
  std::optional<ValueId> lens;   // [batch, 1], the sequence lengths
  DType t = DType::F32;
};

// The `activations` attribute (defaults per layer) with alphas and betas consumed in order by the
// activations that take them, as onnxruntime reads them.
std::vector<Activation> activationsOf(OnnxNode& c, const std::vector<std::string>& defaults, int64_t dirs) {
  std::vector<std::string> names;
  if (const auto* a = c.attr("activations"))
    for (const auto& s : a->strings) names.push_back(s);
  if (names.empty())
    for (int64_t d = 0; d < dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  if (names.size() != defaults.size() * static_cast<size_t>(dirs))
    throw Error("activations must list " + std::to_string(defaults.size() * static_cast<size_t>(dirs)) + " functions, got " +
                std::to_string(names.size()));
  std::vector<float> alphas, betas;
  if (const auto* a = c.attr("activation_alpha")) alphas.assign(a->floats.begin(), a->floats.end());
  if (const auto* b = c.attr("activation_beta")) betas.assign(b->floats.begin(), b->floats.end());
  size_t nextAlpha = 0, nextBeta = 0;
  std::vector<Activation> out;
  for (const std::string& n : names) {
    const ActivationKind& k = activationKind(n);
    Activation a{n, k.alpha, k.beta};
    if (k.params >= 1 && nextAlpha < alphas.size()) a.alpha = alphas[nextAlpha++];
    if (k.params >= 2 && nextBeta < betas.size()) a.beta = betas[nextBeta++];
    out.push_back(a);
  }
  return out;
}

Recurrent readRecurrent(OnnxNode& c, int gates, const std::vector<std::string>& defaultActs) {
  Recurrent r;
  r.gates = gates;
  r.batchFirst = c.attrInt("layout", 0) != 0;
  std::string direction = c.attrString("direction", "forward");
  if (direction == "bidirectional") r.dirs = 2;
  else if (direction == "reverse") r.reverseOnly = true;
  else if (direction != "forward") throw Error("direction must be forward, reverse or bidirectional, got '" + direction + "'");
  r.x = c.in(0);
  if (c.rank(r.x) != 3) throw Error("X must be rank 3, got rank " + std::to_string(c.rank(r.x)));
  if (r.batchFirst) r.x = c.emit("transpose", {r.x}, {{"dim0", int64_t{0}}, {"dim1", int64_t{1}}});
  Ints xs = c.sizes(r.x);
  r.seq = xs[0];
  r.batch = xs[1];
  r.t = c.dtype(r.x);
  if (!isFloating(r.t)) throw Error("X must be floating point");
  Ints ws = c.sizes(c.in(1));
  if (ws.size() != 3 || ws[0] != r.dirs || ws[1] % gates != 0 || ws[2] != xs[2])
    throw Error("W must be [" + std::to_string(r.dirs) + ", " + std::to_string(gates) + "*hidden_size, " + std::to_string(xs[2]) +
                "], got " + shapeStr(c.shape(c.in(1))));
  r.hidden = c.attrInt("hidden_size", ws[1] / gates);
  if (r.hidden <= 0 || ws[1] != gates * r.hidden) throw Error("hidden_size does not match W's " + std::to_string(ws[1]) + " rows");
  if (c.sizes(c.in(2)) != Ints{r.dirs, gates * r.hidden, r.hidden})
    throw Error("R must be [" + std::to_string(r.dirs) + ", " + std::to_string(gates * r.hidden) + ", " + std::to_string(r.hidden) + "]");
  if (const auto* clip = c.attr("clip")) r.clip = clip->f;
  r.acts = activationsOf(c, defaultActs, r.dirs);
  if (c.has(4)) {
    ValueId lens = c.in(4);
    if (!isInteger(c.dtype(lens)) || c.sizes(lens) != Ints{r.batch})
      throw Error("sequence_lens must be integer [" + std::to_string(r.batch) + "]");
    r.lens = c.reshape(lens, {r.batch, 1});
  }
  return r;
}

// An activation of gate pre-activations, which `clip` bounds first (the LSTM's output activation
// of the cell state is not clipped: clipGates false).
ValueId activate(OnnxNode& c, const Recurrent& r, const Activation& a, ValueId x, bool clipGates = true) {
  if (r.clip && clipGates) x = onnxClamp(c, x, -*r.clip, *r.clip);
  return activationKind(a.name).apply(c, x, a.alpha, a.beta);
}

// Columns [k*H, (k+1)*H) of a [batch, gates*H] tensor (or dim 0 of a [gates*H] one).
ValueId gate(OnnxNode& c, const Recurrent& r, ValueId v, int k) {
  int64_t dim = static_cast<int64_t>(c.rank(v)) - 1;
  return c.emit("slice", {v}, {{"dim", dim}, {"start", k * r.hidden}, {"end", (k + 1) * r.hidden}, {"step", int64_t{1}}});
}

// Direction d of a [dirs, ...] input, without its first dim.
ValueId ofDirection(OnnxNode& c, ValueId v, int64_t d) {
  Ints s = c.sizes(v);
  ValueId one = c.emit("slice", {v}, {{"dim", int64_t{0}}, {"start", d}, {"end", d + 1}, {"step", int64_t{1}}});
  return c.reshape(one, Ints(s.begin() + 1, s.end()));
}

// An initial state input ([dirs, batch, H], or [batch, dirs, H] batch-first) for direction d, or zeros.
ValueId initialState(OnnxNode& c, const Recurrent& r, int input, int64_t d) {
  if (!c.has(input)) return c.emit("full", {}, {{"shape", shapeOf({r.batch, r.hidden})}, {"value", 0.0}, {"dtype", std::string(dtypeName(r.t))}});
  ValueId s = c.in(input);
  Ints want = r.batchFirst ? Ints{r.batch, r.dirs, r.hidden} : Ints{r.dirs, r.batch, r.hidden};
  if (c.sizes(s) != want) throw Error("initial state input " + std::to_string(input) + " must be " + shapeStr(shapeOf(want)));
  if (r.batchFirst) s = c.emit("transpose", {s}, {{"dim0", int64_t{0}}, {"dim1", int64_t{1}}});
  return ofDirection(c, s, d);
}

// The per-direction weights: W^T [input, gates*H], R^T [H, gates*H], the two biases [gates*H].
struct DirectionWeights {
  ValueId wT, rT;
  std::optional<ValueId> wb, rb;
};

DirectionWeights weightsOf(OnnxNode& c, const Recurrent& r, int64_t d) {
  auto transposed = [&](ValueId m) { return c.emit("transpose", {m}, {{"dim0", int64_t{0}}, {"dim1", int64_t{1}}}); };
  DirectionWeights w{transposed(ofDirection(c, c.in(1), d)), transposed(ofDirection(c, c.in(2), d)), std::nullopt, std::nullopt};
  if (c.has(3)) {
    if (c.sizes(c.in(3)) != Ints{r.dirs, 2 * r.gates * r.hidden})
      throw Error("B must be [" + std::to_string(r.dirs) + ", " + std::to_string(2 * r.gates * r.hidden) + "]");
    ValueId b = ofDirection(c, c.in(3), d);
    int64_t n = r.gates * r.hidden;
    w.wb = c.emit("slice", {b}, {{"dim", int64_t{0}}, {"start", int64_t{0}}, {"end", n}, {"step", int64_t{1}}});
    w.rb = c.emit("slice", {b}, {{"dim", int64_t{0}}, {"start", n}, {"end", 2 * n}, {"step", int64_t{1}}});
  }
  return w;
}

ValueId plus(OnnxNode& c, ValueId a, std::optional<ValueId> b) { return b ? c.emit("add", {a, *b}) : a; }

// Every step's input projection X W^T + Wb at once: [seq, batch, gates*H].
ValueId projectInputs(OnnxNode& c, const Recurrent& r, const DirectionWeights& w) {
  return plus(c, c.emit("matmul", {r.x, w.wT}), w.wb);
}

ValueId stepOf(OnnxNode& c, const Recurrent& r, ValueId projected, int64_t t) {
  ValueId s = c.emit("slice", {projected}, {{"dim", int64_t{0}}, {"start", t}, {"end", t + 1}, {"step", int64_t{1}}});
  return c.reshape(s, {r.batch, r.gates * r.hidden});
}

// Step t of a masked sequence: where t is past a sequence's end, `held` instead of `fresh`.
ValueId masked(OnnxNode& c, const Recurrent& r, int64_t t, ValueId fresh, ValueId held) {
  if (!r.lens) return fresh;
  ValueId live = c.emit("lt", {c.scalar(static_cast<double>(t), c.dtype(*r.lens)), *r.lens});
  return c.emit("where", {live, fresh, held});
}

// The outputs of one direction: each step's hidden state [batch, H] (zero past a sequence's end)
// in time order, and the last hidden (and LSTM cell) state.
struct DirectionResult {
  std::vector<ValueId> steps;
  ValueId lastH = kNoId, lastC = kNoId;
};

// One cell's update from the step input projection `xp` [batch, gates*H] and the previous states.
using CellStep = std::function<std::pair<ValueId, ValueId>(ValueId xp, ValueId h, ValueId cell)>;

DirectionResult unroll(OnnxNode& c, const Recurrent& r, int64_t d, const CellStep& step, ValueId projected, ValueId h,
                       ValueId cell) {
  bool reverse = r.reverseOnly || d == 1;
  DirectionResult out;
  out.steps.resize(static_cast<size_t>(r.seq));
  ValueId zero = c.scalar(0, r.t);
  for (int64_t i = 0; i < r.seq; ++i) {
    int64_t t = reverse ? r.seq - 1 - i : i;
    auto [hNew, cNew] = step(stepOf(c, r, projected, t), h, cell);
    out.steps[static_cast<size_t>(t)] = masked(c, r, t, hNew, zero);
    h = masked(c, r, t, hNew, h);
    if (cNew != kNoId) cell = masked(c, r, t, cNew, cell);
  }
  out.lastH = h;
  out.lastC = cell;
  return out;
}

// Y [seq, dirs, batch, H] (batch-first: [batch, seq, dirs, H]) and the last states [dirs, batch, H]
// (batch-first: [batch, dirs, H]), for the outputs the node names.
OnnxOutputs assemble(OnnxNode& c, const Recurrent& r, const std::vector<DirectionResult>& dirs, bool withCell) {
  OnnxOutputs outs;
  auto wants = [&](int i) { return std::ssize(c.n.outputs) > i && !c.n.outputs[i].empty(); };
  if (wants(0)) {
    std::vector<ValueId> perDir;
    for (const DirectionResult& dr : dirs) {
      std::vector<ValueId> steps;
      for (ValueId s : dr.steps) steps.push_back(c.reshape(s, {1, 1, r.batch, r.hidden}));
      perDir.push_back(steps.size() == 1 ? steps[0] : c.emit("cat", steps, {{"dim", int64_t{0}}}));
    }
    ValueId y = perDir.size() == 1 ? perDir[0] : c.emit("cat", perDir, {{"dim", int64_t{1}}});
    if (r.batchFirst) y = c.emit("permute", {y}, {{"dims", Ints{2, 0, 1, 3}}});
    outs.push_back(y);
  } else {
    outs.push_back(kNoId);
  }
  auto states = [&](bool cellState) {
    std::vector<ValueId> parts;
    for (const DirectionResult& dr : dirs) parts.push_back(c.reshape(cellState ? dr.lastC : dr.lastH, {1, r.batch, r.hidden}));
    ValueId s = parts.size() == 1 ? parts[0] : c.emit("cat", parts, {{"dim", int64_t{0}}});
    return r.batchFirst ? c.emit("transpose", {s}, {{"dim0", int64_t{0}}, {"dim1", int64_t{1}}}) : s;
  };
  outs.push_back(wants(1) ? states(false) : kNoId);
  if (withCell) outs.push_back(wants(2) ? states(true) : kNoId);
  return outs;
}

OnnxOutputs rnn(OnnxNode& c) {
  Recurrent r = readRecurrent(c, 1, {"Tanh"});
  std::vector<DirectionResult> results;
  for (int64_t d = 0; d < r.dirs; ++d) {
    DirectionWeights w = weightsOf(c, r, d);
    const Activation& f = r.acts[static_cast<size_t>(d)];
    CellStep step = [&](ValueId xp, ValueId h, ValueId) {
      ValueId pre = plus(c, c.emit("add", {xp, c.emit("matmul", {h, w.rT})}), w.rb);
      return std::pair{activate(c, r, f, pre), kNoId};
    };
    results.push_back(unroll(c, r, d, step, projectInputs(c, r, w), initialState(c, r, 5, d), kNoId));
  }
  return assemble(c, r, results, false);
}

OnnxOutputs gru(OnnxNode& c) {
  Recurrent r = readRecurrent(c, 3, {"Sigmoid", "Tanh"});
  r.linearBeforeReset = c.attrInt("linear_before_reset", 0) != 0;
  std::vector<DirectionResult> results;
  for (int64_t d = 0; d < r.dirs; ++d) {
    DirectionWeights w = weightsOf(c, r, d);
    const Activation& f = r.acts[static_cast<size_t>(2 * d)];
    const Activation& g = r.acts[static_cast<size_t>(2 * d + 1)];
    // The update and reset gates' recurrent weights (first 2H columns) and the candidate's (last H).
    auto cols = [&](ValueId m, int64_t from, int64_t to) {
      int64_t dim = static_cast<int64_t>(c.rank(m)) - 1;
      return c.emit("slice", {m}, {{"dim", dim}, {"start", from * r.hidden}, {"end", to * r.hidden}, {"step", int64_t{1}}});
    };
    ValueId rzrT = cols(w.rT, 0, 2), rhT = cols(w.rT, 2, 3);
    std::optional<ValueId> rzrB, rhB;
    if (w.rb) {
      rzrB = cols(*w.rb, 0, 2);
      rhB = cols(*w.rb, 2, 3);
    }
    ValueId one = c.scalar(1, r.t);
    CellStep step = [&](ValueId xp, ValueId h, ValueId) {
      ValueId zr = plus(c, c.emit("add", {cols(xp, 0, 2), c.emit("matmul", {h, rzrT})}), rzrB);
      ValueId z = activate(c, r, f, cols(zr, 0, 1)), rg = activate(c, r, f, cols(zr, 1, 2));
      ValueId recurrent = r.linearBeforeReset ? c.emit("mul", {rg, plus(c, c.emit("matmul", {h, rhT}), rhB)})
                                              : plus(c, c.emit("matmul", {c.emit("mul", {rg, h}), rhT}), rhB);
      ValueId cand = activate(c, r, g, c.emit("add", {cols(xp, 2, 3), recurrent}));
      // (1 - z) * cand + z * h
      ValueId hNew = c.emit("add", {c.emit("mul", {c.emit("sub", {one, z}), cand}), c.emit("mul", {z, h})});
      return std::pair{hNew, kNoId};
    };
    results.push_back(unroll(c, r, d, step, projectInputs(c, r, w), initialState(c, r, 5, d), kNoId));
  }
  return assemble(c, r, results, false);
}

OnnxOutputs lstm(OnnxNode& c) {
  if (c.attrInt("input_forget", 0) != 0) throw OnnxUnsupported("input_forget=1 is not supported");
  Recurrent r = readRecurrent(c, 4, {"Sigmoid", "Tanh", "Tanh"});
  std::vector<DirectionResult> results;
  for (int64_t d = 0; d < r.dirs; ++d) {
    DirectionWeights w = weightsOf(c, r, d);
    const Activation& f = r.acts[static_cast<size_t>(3 * d)];
    const Activation& g = r.acts[static_cast<size_t>(3 * d + 1)];
    const Activation& hAct = r.acts[static_cast<size_t>(3 * d + 2)];
    // Peepholes P [dirs, 3H]: input, output and forget gates' weights on the cell state.
    std::optional<ValueId> pi, po, pf;
    if (c.has(7)) {
      if (c.sizes(c.in(7)) != Ints{r.dirs, 3 * r.hidden}) throw Error("P must be [" + std::to_string(r.dirs) + ", " + std::to_string(3 * r.hidden) + "]");
      ValueId p = ofDirection(c, c.in(7), d);
      pi = gate(c, r, p, 0);
      po = gate(c, r, p, 1);
      pf = gate(c, r, p, 2);
    }
    auto peep = [&](ValueId pre, std::optional<ValueId> pw, ValueId cell) { return pw ? c.emit("add", {pre, c.emit("mul", {*pw, cell})}) : pre; };
    CellStep step = [&](ValueId xp, ValueId h, ValueId cell) {
      ValueId pre = plus(c, c.emit("add", {xp, c.emit("matmul", {h, w.rT})}), w.rb);  // gates i, o, f, c
      ValueId i = activate(c, r, f, peep(gate(c, r, pre, 0), pi, cell));
      ValueId fg = activate(c, r, f, peep(gate(c, r, pre, 2), pf, cell));
      ValueId cand = activate(c, r, g, gate(c, r, pre, 3));
      ValueId cNew = c.emit("add", {c.emit("mul", {fg, cell}), c.emit("mul", {i, cand})});
      ValueId o = activate(c, r, f, peep(gate(c, r, pre, 1), po, cNew));
      return std::pair{c.emit("mul", {o, activate(c, r, hAct, cNew, false)}), cNew};
    };
    results.push_back(unroll(c, r, d, step, projectInputs(c, r, w), initialState(c, r, 5, d), initialState(c, r, 6, d)));
  }
  return assemble(c, r, results, true);
}

}  // namespace

void addRecurrentImporters(OnnxImporters& m) {
  m["RNN"] = rnn;
  m["GRU"] = gru;
  m["LSTM"] = lstm;
}

}  // namespace fusebox

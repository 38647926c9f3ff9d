#!/usr/bin/python3
"""Writes ONNX test cases (ONNX's backend-test layout: test_<name>/model.onnx and
test_data_set_0/{input,output}_N.pb) for op forms that ONNX's own node/ cases and the real-model
corpus leave out, with onnxruntime's outputs as the expected ones. Run it where Debian's
python3-onnx and the npm package onnxruntime-node are (not needed by the build or the tests):

    cd /tmp && npm install --ignore-scripts onnxruntime-node
    NODE_PATH=/tmp/node_modules /usr/bin/python3 tests/models/ort_cases/make_cases.py

Inputs are seeded; every case is rewritten. ctest runs them (cli.conformance.ort_cases)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 18
CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def rng(name):  # seeded by the case's name
    return np.random.default_rng(sum(map(ord, name)))


ONNX_TYPE = {  # numpy -> ONNX element types of inputs; outputs are float unless a case says
np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64, np.int32: TensorProto.INT32, np.bool_: TensorProto.BOOL}


def model(nodes, inputs, outputs, initializers=()):
    """inputs: name -> numpy array (graph inputs); outputs: names (types left to inference)."""
    ins = [helper.make_tensor_value_info(n, ONNX_TYPE[a.dtype.type], a.shape) for n, a in inputs.items()]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs]  # shapes inferred below
    g = helper.make_graph(nodes, "case", ins, outs, [numpy_helper.from_array(a, n) for n, a in initializers])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    return onnx.shape_inference.infer_shapes(m, strict_mode=True)


def recurrent(op, name, seq, batch, inp, hidden, *, dirs=1, gates=1, lens=None, init=False, cell=False,
              peep=False, bias=True, layout=0, outputs=("Y", "Y_h"), **attrs):
    """A one-node RNN/GRU/LSTM case. onnxruntime has no batch-first layout (layout=1): the
    reference is then the same layer at layout 0 on transposed inputs, its outputs transposed back."""
    if layout:
        twin, twin_feeds, _ = recurrent(op, name, seq, batch, inp, hidden, dirs=dirs, gates=gates, lens=lens, init=init,
                                        cell=cell, peep=peep, bias=bias, layout=0, outputs=outputs, **attrs)
        feeds = {n: (np.ascontiguousarray(np.swapaxes(a, 0, 1)) if n in ("X", "h0", "c0") else a) for n, a in twin_feeds.items()}
        m = model([helper.make_node(op, list(twin.graph.node[0].input), list(outputs), **{
            a.name: helper.get_attribute_value(a) for a in twin.graph.node[0].attribute if a.name != "layout"}, layout=1)],
                  feeds, [o for o in outputs if o], [(w.name, numpy_helper.to_array(w)) for w in twin.graph.initializer])
        batch_first = {"Y": (2, 0, 1, 3), "Y_h": (1, 0, 2), "Y_c": (1, 0, 2)}

        def reference(run):
            return {n: np.ascontiguousarray(np.transpose(a, batch_first[n])) for n, a in run(twin, twin_feeds).items()}
        return m, feeds, reference
    r = rng(name)
    X = r.standard_normal((seq, batch, inp)).astype(np.float32)
    W = (r.standard_normal((dirs, gates * hidden, inp)) / np.sqrt(inp)).astype(np.float32)
    R = (r.standard_normal((dirs, gates * hidden, hidden)) / np.sqrt(hidden)).astype(np.float32)
    feeds = {"X": X, "W": W, "R": R}
    names = ["X", "W", "R"]
    names.append("B" if bias else "")
    if bias:
        feeds["B"] = (r.standard_normal((dirs, 2 * gates * hidden)) * 0.3).astype(np.float32)
    names.append("lens" if lens is not None else "")
    if lens is not None:
        feeds["lens"] = np.array(lens, dtype=np.int32)
    state = (dirs, batch, hidden)
    names.append("h0" if init else "")
    if init:
        feeds["h0"] = r.standard_normal(state).astype(np.float32)
    if op == "LSTM":
        names.append("c0" if cell else "")
        if cell:
            feeds["c0"] = r.standard_normal(state).astype(np.float32)
        names.append("P" if peep else "")
        if peep:
            feeds["P"] = (r.standard_normal((dirs, 3 * hidden)) * 0.5).astype(np.float32)
    while names and names[-1] == "":
        names.pop()
    direction = {1: "forward", 2: "bidirectional"}[dirs] if attrs.get("direction") is None else attrs.pop("direction")
    node = helper.make_node(op, names, list(outputs), hidden_size=hidden, direction=direction, **attrs)
    # the weights are initializers (what a training step differentiates), the rest graph inputs
    weights = [(n, feeds.pop(n)) for n in ("W", "R", "B", "P") if n in feeds]
    return model([node], feeds, [o for o in outputs if o], weights), feeds, None


@case
def lstm_bidirectional_sequence_lens():  # peepholes, initial states, sequences of 5, 2 and 1 steps
    return recurrent("LSTM", "lstm_bidirectional_sequence_lens", 5, 3, 4, 6, dirs=2, gates=4, lens=[5, 2, 1],
                     init=True, cell=True, peep=True, outputs=("Y", "Y_h", "Y_c"))


@case
def lstm_reverse_clip_activations():
    return recurrent("LSTM", "lstm_reverse_clip_activations", 4, 2, 3, 5, gates=4, direction="reverse", clip=0.8,
                     activations=["HardSigmoid", "Softsign", "ScaledTanh"], activation_alpha=[0.3, 0.9],
                     activation_beta=[0.45, 1.3], outputs=("Y", "Y_h", "Y_c"))


@case
def lstm_batch_first_one_step():  # layout=1, a single step and a single sequence
    return recurrent("LSTM", "lstm_batch_first_one_step", 1, 1, 3, 2, gates=4, layout=1, init=True, cell=True,
                     outputs=("Y", "Y_h", "Y_c"))


@case
def gru_linear_before_reset_reverse_lens():
    return recurrent("GRU", "gru_linear_before_reset_reverse_lens", 6, 3, 5, 4, gates=3, direction="reverse",
                     lens=[6, 3, 1], init=True, linear_before_reset=1)


@case
def gru_bidirectional_batch_first():
    return recurrent("GRU", "gru_bidirectional_batch_first", 4, 2, 3, 5, dirs=2, gates=3, layout=1, init=True,
                     activations=["Sigmoid", "Tanh", "HardSigmoid", "Relu"], activation_alpha=[0.25], activation_beta=[0.4])


@case
def rnn_bidirectional_lens_relu():
    return recurrent("RNN", "rnn_bidirectional_lens_relu", 5, 2, 3, 7, dirs=2, lens=[3, 5], init=True,
                     activations=["Relu", "LeakyRelu"], activation_alpha=[0.2], outputs=("Y", "Y_h"))


@case
def rnn_no_bias_only_last_state():
    return recurrent("RNN", "rnn_no_bias_only_last_state", 3, 4, 2, 3, bias=False, outputs=("", "Y_h"))


def to_json(feeds):
    kind = {np.float32: "float32", np.int64: "int64", np.int32: "int32", np.bool_: "bool"}
    return {n: {"dtype": kind[a.dtype.type], "dims": list(a.shape), "data": a.astype(np.float64 if a.dtype.kind == "f" else np.int64).ravel().tolist()}
            for n, a in feeds.items()}


def from_json(t):
    dtype = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "int32": np.int32, "bool": np.bool_}[t["type"] if "type" in t else t["dtype"]]
    data = [float(v) if isinstance(v, str) else v for v in t["data"]]
    return np.array(data, dtype=dtype).reshape(t["dims"])


def ort(m, feeds):
    """onnxruntime's outputs of model m on feeds, by name."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.onnx")
        onnx.save(m, path)
        with open(os.path.join(tmp, "inputs.json"), "w") as f:
            json.dump(to_json(feeds), f)
        out = subprocess.run(["node", os.path.join(HERE, "ort_run.js"), path, f.name], capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"onnxruntime failed: {out.stderr.strip()}")
    return {n: from_json(t) for n, t in json.loads(out.stdout).items()}


def write(name, m, feeds, reference):
    onnx.checker.check_model(m, full_check=True)
    results = reference(ort) if reference else ort(m, feeds)
    folder = os.path.join(HERE, "test_" + name)
    shutil.rmtree(folder, ignore_errors=True)
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data)
    onnx.save(m, os.path.join(folder, "model.onnx"))
    for i, n in enumerate(i.name for i in m.graph.input):
        onnx.save_tensor(numpy_helper.from_array(feeds[n], n), os.path.join(data, f"input_{i}.pb"))
    for i, o in enumerate(m.graph.output):
        onnx.save_tensor(numpy_helper.from_array(results[o.name], o.name), os.path.join(data, f"output_{i}.pb"))
    print(f"test_{name}: " + ", ".join(f"{o.name} {list(results[o.name].shape)}" for o in m.graph.output))


if __name__ == "__main__":
    for name in sys.argv[1:] or list(CASES):
        write(name, *CASES[name]())

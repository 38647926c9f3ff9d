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
OPSET = 17  # what Debian's python3-onnx (1.12) checks and infers; opset 18 cases are checked by onnxruntime only
CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def rng(name):  # seeded by the case's name
    return np.random.default_rng(sum(map(ord, name)))


ONNX_TYPE = {  # numpy -> ONNX element types of inputs; outputs are float unless a case says
np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64, np.int32: TensorProto.INT32, np.bool_: TensorProto.BOOL}


def model(nodes, inputs, outputs, initializers=(), opset=OPSET, int_outputs=()):
    """inputs: name -> numpy array (graph inputs); outputs: names, float unless in int_outputs
    (int64); shapes left to inference."""
    ins = [helper.make_tensor_value_info(n, ONNX_TYPE[a.dtype.type], a.shape) for n, a in inputs.items()]
    outs = [helper.make_tensor_value_info(n, TensorProto.INT64 if n in int_outputs else TensorProto.FLOAT, None) for n in outputs]
    g = helper.make_graph(nodes, "case", ins, outs, [numpy_helper.from_array(a, n) for n, a in initializers])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return onnx.shape_inference.infer_shapes(m, strict_mode=True) if opset <= OPSET else m


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


def resize(name, shape, *, scales=None, sizes=None, axes=None, **attrs):
    """Resize(X * W): the weight W gives a training step a gradient through the resize."""
    r = rng(name)
    X = r.standard_normal(shape).astype(np.float32)
    W = (1 + 0.2 * r.standard_normal(shape)).astype(np.float32)
    inits = [("W", W)]
    inputs = ["XW", "", "", ""]
    if scales is not None:
        inits.append(("scales", np.array(scales, dtype=np.float32)))
        inputs[2] = "scales"
    if sizes is not None:
        inits.append(("sizes", np.array(sizes, dtype=np.int64)))
        inputs[3] = "sizes"
    if attrs.get("coordinate_transformation_mode") == "tf_crop_and_resize":
        inits.append(("roi", np.array(attrs.pop("roi"), dtype=np.float32)))
        inputs[1] = "roi"
    while inputs[-1] == "":
        inputs.pop()
    if axes is not None:
        attrs["axes"] = axes
    opset18 = axes is not None or "keep_aspect_ratio_policy" in attrs or attrs.get("coordinate_transformation_mode") == "half_pixel_symmetric"
    nodes = [helper.make_node("Mul", ["X", "W"], ["XW"]), helper.make_node("Resize", inputs, ["Y"], **attrs)]
    return model(nodes, {"X": X}, ["Y"], inits, 18 if opset18 else OPSET), {"X": X}, None


@case
def resize_linear_half_pixel_odd_sizes():  # 7x5 -> 11x3: up one axis, down the other (a scale of 3/5)
    return resize("resize_linear_half_pixel_odd_sizes", (1, 2, 7, 5), sizes=[1, 2, 11, 3], mode="linear")


@case
def resize_nearest_prime_scales_floor():
    return resize("resize_nearest_prime_scales_floor", (2, 3, 5, 7), scales=[1, 1, 2.6, 1.3], mode="nearest",
                  nearest_mode="floor", coordinate_transformation_mode="asymmetric")


@case
def resize_cubic_exclude_outside_axes():  # opset 18's axes: only the last two dims are given
    return resize("resize_cubic_exclude_outside_axes", (1, 1, 6, 9), sizes=[13, 4], axes=[2, 3], mode="cubic",
                  exclude_outside=1, cubic_coeff_a=-0.5)


@case
def resize_linear_align_corners_sizes_to_one():  # a dim resized to a single element
    return resize("resize_linear_align_corners_sizes_to_one", (1, 3, 4, 6), sizes=[1, 3, 1, 17], mode="linear",
                  coordinate_transformation_mode="align_corners")


@case
def resize_nearest_keep_aspect_not_larger():
    return resize("resize_nearest_keep_aspect_not_larger", (1, 2, 6, 4), sizes=[9, 9], axes=[2, 3], mode="nearest",
                  keep_aspect_ratio_policy="not_larger", nearest_mode="round_prefer_ceil")


@case
def resize_linear_half_pixel_symmetric():
    return resize("resize_linear_half_pixel_symmetric", (1, 1, 5, 8), scales=[1, 1, 1.7, 0.55], mode="linear",
                  coordinate_transformation_mode="half_pixel_symmetric")


@case
def resize_linear_pytorch_half_pixel_3d():  # a rank-3 input (N, C, L), as a 1-D upsample exports
    return resize("resize_linear_pytorch_half_pixel_3d", (2, 3, 10), sizes=[2, 3, 23], mode="linear",
                  coordinate_transformation_mode="pytorch_half_pixel")


@case
def resize_tf_crop_and_resize_extrapolate():
    return resize("resize_tf_crop_and_resize_extrapolate", (1, 1, 5, 5), sizes=[1, 1, 4, 6], mode="linear",
                  coordinate_transformation_mode="tf_crop_and_resize", roi=[0, 0, -0.2, 0.1, 1, 1, 0.9, 1.3],
                  extrapolation_value=-2.5)


def window(name, op, x_shape, w_shape=None, *, bias=False, **attrs):
    """One Conv/ConvTranspose (weight and bias initializers) or pool (after X * W, so that a
    training step has a weight to differentiate) on a seeded input."""
    r = rng(name)
    X = r.standard_normal(x_shape).astype(np.float32)
    if op in ("Conv", "ConvTranspose"):
        W = (r.standard_normal(w_shape) / np.sqrt(np.prod(w_shape[1:]))).astype(np.float32)
        inits = [("W", W)] + ([("B", (0.1 * r.standard_normal(w_shape[0] if op == "Conv" else w_shape[1] * attrs.get("group", 1))).astype(np.float32))] if bias else [])
        nodes = [helper.make_node(op, ["X", "W"] + (["B"] if bias else []), ["Y"], **attrs)]
    else:
        inits = [("W", (1 + 0.2 * r.standard_normal(x_shape)).astype(np.float32))]
        nodes = [helper.make_node("Mul", ["X", "W"], ["XW"]), helper.make_node(op, ["XW"], ["Y"], **attrs)]
    return model(nodes, {"X": X}, ["Y"], inits), {"X": X}, None


@case
def conv_transpose_2d_groups_stride_output_padding():
    return window("conv_transpose_2d_groups_stride_output_padding", "ConvTranspose", (2, 4, 5, 3), (4, 3, 3, 2), bias=True,
                  group=2, strides=[2, 3], pads=[1, 0, 0, 1], output_padding=[1, 2], dilations=[1, 2])


@case
def conv_transpose_1d_output_shape():
    return window("conv_transpose_1d_output_shape", "ConvTranspose", (1, 3, 7), (3, 2, 4), strides=[3], output_shape=[22])


@case
def conv_transpose_3d_same_upper():
    return window("conv_transpose_3d_same_upper", "ConvTranspose", (1, 2, 3, 4, 2), (2, 3, 2, 3, 2), bias=True,
                  strides=[2, 1, 2], auto_pad="SAME_UPPER")


@case
def conv_3d_groups_dilated_asymmetric():
    return window("conv_3d_groups_dilated_asymmetric", "Conv", (2, 4, 6, 5, 7), (6, 2, 2, 3, 2), bias=True, group=2,
                  strides=[2, 1, 3], dilations=[2, 1, 2], pads=[1, 0, 2, 0, 1, 1])


@case
def max_pool_3d_ceil_padded():
    return window("max_pool_3d_ceil_padded", "MaxPool", (1, 2, 7, 6, 5), kernel_shape=[3, 2, 3], strides=[2, 2, 2],
                  pads=[1, 0, 1, 1, 0, 1], ceil_mode=1)


@case
def average_pool_3d_count_include_pad():
    return window("average_pool_3d_count_include_pad", "AveragePool", (2, 1, 5, 6, 7), kernel_shape=[2, 3, 3], strides=[1, 2, 2],
                  pads=[1, 1, 0, 0, 1, 2], count_include_pad=1)


@case
def max_pool_2d_dilated_asymmetric_pads():  # (not SAME: onnxruntime sizes SAME pads by the undilated kernel)
    return window("max_pool_2d_dilated_asymmetric_pads", "MaxPool", (1, 3, 9, 8), kernel_shape=[3, 2], dilations=[2, 3],
                  strides=[2, 1], pads=[2, 1, 1, 0])


@case
def max_pool_1d_dilated_ceil():
    return window("max_pool_1d_dilated_ceil", "MaxPool", (2, 2, 11), kernel_shape=[3], dilations=[2], strides=[2], ceil_mode=1)


def weighted(name, x_shape, node, extra_inputs=(), extra_inits=(), outputs=("Y",), int_outputs=()):
    """node applied to X * W (W a weight, so a training step has a gradient) and further inputs."""
    r = rng(name)
    X = r.standard_normal(x_shape).astype(np.float32)
    W = (1 + 0.2 * r.standard_normal(x_shape)).astype(np.float32)
    feeds = {"X": X}
    feeds.update(dict(extra_inputs))
    nodes = [helper.make_node("Mul", ["X", "W"], ["XW"]), node]
    return model(nodes, feeds, list(outputs), [("W", W)] + list(extra_inits), int_outputs=int_outputs), feeds, None


def einsum(name, equation, x_shape, *others):
    """Einsum(equation) of X * W and further seeded inputs of the given shapes."""
    r = rng(name + "_others")
    extra = [(f"B{i}", r.standard_normal(s).astype(np.float32)) for i, s in enumerate(others)]
    node = helper.make_node("Einsum", ["XW"] + [n for n, _ in extra], ["Y"], equation=equation)
    return weighted(name, x_shape, node, extra)


@case
def einsum_attention_scores_ellipsis():  # ...qd,...kd->...qk with broadcast batch dims
    return einsum("einsum_attention_scores_ellipsis", "...qd,...kd->...qk", (2, 3, 5, 4), (1, 3, 7, 4))


@case
def einsum_three_operands_implicit():  # implicit output: the letters used once, sorted (i, l)
    return einsum("einsum_three_operands_implicit", "ij,jk,kl", (3, 4), (4, 5), (5, 2))


@case
def einsum_trace_and_outer():  # a diagonal summed, times an outer product
    return einsum("einsum_trace_and_outer", "iij,k->jk", (3, 3, 2), (4,))


@case
def einsum_bilinear_sum_out():  # a label only one operand has is summed before the matmul
    return einsum("einsum_bilinear_sum_out", "bn,anm,bm->ba", (2, 3), (4, 3, 5), (2, 5))


@case
def gather_nd_batch_dims():
    r = rng("gather_nd_batch_dims")
    idx = np.array([[[1, 0], [2, 3]], [[0, -1], [1, 1]]], dtype=np.int64)  # [2, 2, 2] over data [2, 3, 4, 5]
    return weighted("gather_nd_batch_dims", (2, 3, 4, 5), helper.make_node("GatherND", ["XW", "idx"], ["Y"], batch_dims=1),
                    extra_inits=[("idx", idx)])


@case
def scatter_nd_add_duplicates():
    r = rng("scatter_nd_add_duplicates")
    idx = np.array([[1], [3], [1], [-2]], dtype=np.int64)  # rows of data [5, 3]; row 1 twice
    U = r.standard_normal((4, 3)).astype(np.float32)
    return weighted("scatter_nd_add_duplicates", (5, 3), helper.make_node("ScatterND", ["XW", "idx", "U"], ["Y"], reduction="add"),
                    extra_inputs=[("U", U)], extra_inits=[("idx", idx)])


@case
def scatter_nd_elements_of_3d():
    r = rng("scatter_nd_elements_of_3d")
    idx = np.array([[0, 1, 2], [1, 0, 0], [1, 2, 3]], dtype=np.int64)  # single elements of [2, 3, 4]
    U = r.standard_normal((3,)).astype(np.float32)
    return weighted("scatter_nd_elements_of_3d", (2, 3, 4), helper.make_node("ScatterND", ["XW", "idx", "U"], ["Y"]),
                    extra_inputs=[("U", U)], extra_inits=[("idx", idx)])


@case
def scatter_elements_add_axis1():
    r = rng("scatter_elements_add_axis1")
    idx = np.array([[0, 2, 2], [-1, 1, 0], [3, 3, 3]], dtype=np.int64)  # into data [3, 4] along axis 1
    U = r.standard_normal((3, 3)).astype(np.float32)
    return weighted("scatter_elements_add_axis1", (3, 4), helper.make_node("ScatterElements", ["XW", "idx", "U"], ["Y"], axis=1, reduction="add"),
                    extra_inputs=[("U", U)], extra_inits=[("idx", idx)])


@case
def top_k_smallest_axis0_ties():
    r = rng("top_k_smallest_axis0_ties")
    k = np.array([3], dtype=np.int64)
    X = np.round(r.standard_normal((7, 4)) * 2).astype(np.float32)  # rounded: ties
    m = model([helper.make_node("Mul", ["X", "W"], ["XW"]), helper.make_node("TopK", ["XW", "k"], ["V", "I"], axis=0, largest=0)],
              {"X": X}, ["V", "I"], [("W", np.ones((7, 4), dtype=np.float32)), ("k", k)], int_outputs=("I",))
    return m, {"X": X}, None


@case
def top_k_largest_last_axis():
    k = np.array([4], dtype=np.int64)
    return weighted("top_k_largest_last_axis", (2, 3, 9), helper.make_node("TopK", ["XW", "k"], ["V", "I"]), extra_inits=[("k", k)],
                    outputs=("V", "I"), int_outputs=("I",))


def grid_sample(name, mode, padding, align):
    r = rng(name + "_grid")
    grid = (r.uniform(-1.3, 1.3, (2, 4, 6, 2))).astype(np.float32)  # outside [-1, 1] too: padding matters
    return weighted(name, (2, 3, 5, 7), helper.make_node("GridSample", ["XW", "grid"], ["Y"], mode=mode, padding_mode=padding,
                                                           align_corners=align), extra_inputs=[("grid", grid)])


@case
def grid_sample_bicubic_border_align_corners():
    return grid_sample("grid_sample_bicubic_border_align_corners", "bicubic", "border", 1)


@case
def grid_sample_bilinear_reflection():
    return grid_sample("grid_sample_bilinear_reflection", "bilinear", "reflection", 0)


@case
def grid_sample_nearest_zeros():
    return grid_sample("grid_sample_nearest_zeros", "nearest", "zeros", 0)


@case
def grid_sample_nearest_reflection_align_corners():
    return grid_sample("grid_sample_nearest_reflection_align_corners", "nearest", "reflection", 1)


@case
def lrn_size5_few_channels():  # size 5 over 3 channels: windows cut at both ends
    return weighted("lrn_size5_few_channels", (2, 3, 3, 5), helper.make_node("LRN", ["XW"], ["Y"], size=5, alpha=0.02, beta=0.6, bias=1.5))


@case
def dft_complex_axis2_cut():  # a complex signal along axis 2, cut from 6 to 4 samples
    length = np.array(4, dtype=np.int64)
    return weighted("dft_complex_axis2_cut", (2, 5, 6, 2), helper.make_node("DFT", ["XW", "len"], ["Y"], axis=2),
                    extra_inits=[("len", length)])


@case
def dft_real_onesided_padded():  # 9 real samples zero-padded to 12, bins 0..6
    length = np.array(12, dtype=np.int64)
    return weighted("dft_real_onesided_padded", (2, 9, 1), helper.make_node("DFT", ["XW", "len"], ["Y"], axis=1, onesided=1),
                    extra_inits=[("len", length)])


@case
def reverse_sequence_time_major():
    lens = np.array([5, 1, 3], dtype=np.int64)
    return weighted("reverse_sequence_time_major", (5, 3, 4), helper.make_node("ReverseSequence", ["XW", "lens"], ["Y"], time_axis=0,
                                                                                batch_axis=1), extra_inputs=[("lens", lens)])


@case
def det_batched_3x3():
    return weighted("det_batched_3x3", (2, 3, 3, 3), helper.make_node("Det", ["XW"], ["Y"]))


@case
def max_pool_indices_padded_stride2():
    return weighted("max_pool_indices_padded_stride2", (2, 3, 7, 6),
                    helper.make_node("MaxPool", ["XW"], ["Y", "I"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
                    outputs=("Y", "I"), int_outputs=("I",))


@case
def quantize_dequantize_int8_per_axis():  # int8 zero points per channel: saturates at -128 and 127
    r = rng("quantize_dequantize_int8_per_axis")
    X = (3 * r.standard_normal((2, 3, 4))).astype(np.float32)
    W = (1 + 0.2 * r.standard_normal((2, 3, 4))).astype(np.float32)
    scale = np.array([0.02, 0.05, 0.01], dtype=np.float32)
    zero = np.array([-3, 0, 5], dtype=np.int8)
    nodes = [helper.make_node("Mul", ["X", "W"], ["XW"]), helper.make_node("QuantizeLinear", ["XW", "s", "z"], ["Q"], axis=1),
             helper.make_node("DequantizeLinear", ["Q", "s", "z"], ["Y"], axis=1)]
    return model(nodes, {"X": X}, ["Y"], [("W", W), ("s", scale), ("z", zero)]), {"X": X}, None


@case
def compress_axis1():
    cond = np.array([True, False, True, True, False, True], dtype=np.bool_)
    m, feeds, _ = weighted("compress_axis1", (3, 6, 2), helper.make_node("Compress", ["XW", "cond"], ["Y"], axis=1), extra_inits=[("cond", cond)])
    m.graph.output[0].type.tensor_type.shape.CopyFrom(helper.make_tensor_type_proto(TensorProto.FLOAT, [3, 4, 2]).tensor_type.shape)
    return m, feeds, None  # the output's shape depends on cond's values: inference leaves it out


@case
def scatter_nd_mul_duplicates():
    r = rng("scatter_nd_mul_duplicates")
    idx = np.array([[2], [0], [2]], dtype=np.int64)  # row 2 twice
    U = r.standard_normal((3, 4)).astype(np.float32)
    return weighted("scatter_nd_mul_duplicates", (4, 4), helper.make_node("ScatterND", ["XW", "idx", "U"], ["Y"], reduction="mul"),
                    extra_inputs=[("U", U)], extra_inits=[("idx", idx)])


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
    if m.opset_import[0].version <= OPSET:
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


@case
def pow_constant_exponents():
    """Pow by Constant exponents: 2 (rank 0) and 3 (rank 1) become multiplications at import; 2.5 stays
    a pow; a [1, 1, 1, 1] exponent of 2 broadcasts the result to rank 4 (so it stays a pow too). Negative
    bases included (odd powers keep their sign); X * W gives the training step a weight."""
    r = rng("pow_constant_exponents")
    X = r.standard_normal((2, 3, 5)).astype(np.float32)
    W = (1 + 0.3 * r.standard_normal((5,))).astype(np.float32)
    const = lambda name, value: helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(value, dtype=np.float32), name))
    nodes = [helper.make_node("Mul", ["X", "W"], ["H"]), const("two", 2.0), const("three", [3.0]), const("two_and_half", 2.5),
             const("two_rank4", [[[[2.0]]]]), helper.make_node("Pow", ["H", "two"], ["A"]), helper.make_node("Pow", ["H", "three"], ["B"]),
             helper.make_node("Abs", ["H"], ["HA"]), helper.make_node("Pow", ["HA", "two_and_half"], ["C"]),
             helper.make_node("Add", ["A", "B"], ["AB"]), helper.make_node("Add", ["AB", "C"], ["Y"]),
             helper.make_node("Pow", ["H", "two_rank4"], ["Y4"])]
    return model(nodes, {"X": X}, ["Y", "Y4"], [("W", W)]), {"X": X}, None


if __name__ == "__main__":
    for name in sys.argv[1:] or list(CASES):
        write(name, *CASES[name]())

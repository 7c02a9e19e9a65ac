#!/usr/bin/env python3
"""ONNX's recurrent layers (RNN, GRU, LSTM) and ReverseSequence through `loom compile` and
`loom run`, against ONNX Runtime on the same models and inputs.

The cases are drawn, seeded, from the attribute space: direction (forward, reverse,
bidirectional), layout, every activation function with random alpha/beta, clip, biases,
initial states, peepholes, input_forget, linear_before_reset, and sequence_lens of random
lengths, with the weights now initializers, now runtime inputs. Several layers share one
model (one compile); every output is checked and named on failure.
Usage: check_recurrent_layers.py --loom PATH --workdir DIR [--seed N] [--cases N]
Exit status: 0 pass, 1 fail, 77 skipped (the Python environment lacks a package).
"""

import argparse
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(REPO, "python"))

from loom_models import environment  # noqa: E402

environment.require("numpy", "onnx", "onnxruntime")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

from loom_models import loom_tool  # noqa: E402

# name -> (takes alpha, takes beta)
ACTIVATIONS = {"Relu": (0, 0), "Tanh": (0, 0), "Sigmoid": (0, 0), "Affine": (1, 1),
               "LeakyRelu": (1, 0), "ThresholdedRelu": (1, 0), "ScaledTanh": (1, 1),
               "HardSigmoid": (1, 1), "Elu": (1, 0), "Softsign": (0, 0), "Softplus": (0, 0)}
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
DEFAULT_ACTIVATIONS = {"RNN": 1, "GRU": 2, "LSTM": 3}  # functions per direction
RELATIVE_TOLERANCE = 1e-4
ABSOLUTE_TOLERANCE = 1e-5


class Model:
    """The inputs, initializers, nodes and outputs of one model under construction."""

    def __init__(self):
        self.inputs, self.initializers, self.nodes, self.outputs = [], [], [], []
        self.feeds = {}

    def tensor(self, name, array, runtime):
        """`array` as a runtime input (fed) or an initializer; returns `name`."""
        if runtime:
            dtype = helper.np_dtype_to_tensor_dtype(array.dtype)
            self.inputs.append(helper.make_tensor_value_info(name, dtype, array.shape))
            self.feeds[name] = array
        else:
            self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def proto(self):
        graph = helper.make_graph(self.nodes, "recurrent", self.inputs, self.outputs,
                                  self.initializers)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


class ModelParts:
    """The model Loom compiles and the one ONNX Runtime runs as its reference: the same but
    for batch-first layers (layout 1), which ONNX Runtime does not run: its reference takes
    and gives the time-first layout, its inputs and outputs transposed."""

    def __init__(self):
        self.loom, self.reference = Model(), Model()
        self.output_axes = {}  # reference output -> the transpose that makes it Loom's

    def tensor(self, name, array, runtime, reference_axes=None):
        self.reference.tensor(name, array if reference_axes is None
                              else np.ascontiguousarray(array.transpose(reference_axes)), runtime)
        return self.loom.tensor(name, array, runtime)

    def node(self, op, inputs, outputs, attrs, output_axes):
        self.loom.nodes.append(helper.make_node(op, inputs, outputs, name=outputs[0], **attrs))
        reference_attrs = dict(attrs, layout=0) if "layout" in attrs else attrs
        self.reference.nodes.append(helper.make_node(op, inputs, outputs, name=outputs[0],
                                                     **reference_attrs))
        for name, axes in zip(outputs, output_axes):
            for model in (self.loom, self.reference):
                model.outputs.append(helper.make_empty_tensor_value_info(name))
            if attrs.get("layout"):
                self.output_axes[name] = axes


def random_activations(rng, op, directions):
    """Functions for every direction, and the alphas and betas they take in order. A
    bidirectional RNN gets one function twice: ONNX Runtime's RNN reads activation_alpha by
    direction, not in the order the functions take them as ONNX says (and Loom does), and the
    two readings differ when only one direction's function takes a value."""
    names, alphas, betas = [], [], []
    rnn_function = str(rng.choice(sorted(ACTIVATIONS)))
    for _ in range(DEFAULT_ACTIVATIONS[op] * directions):
        name = rnn_function if op == "RNN" else str(rng.choice(sorted(ACTIVATIONS)))
        names.append(name)
        takes_alpha, takes_beta = ACTIVATIONS[name]
        if takes_alpha:
            alphas.append(float(rng.uniform(0.1, 1.5)))
        if takes_beta:
            betas.append(float(rng.uniform(-0.5, 0.5)))
    return names, alphas, betas


def add_layer(parts, rng, index, op):
    """One randomly configured `op` node; returns a description of it."""
    direction = str(rng.choice(["forward", "reverse", "bidirectional"]))
    d = 2 if direction == "bidirectional" else 1
    steps, batch = int(rng.integers(1, 6)), int(rng.integers(1, 4))
    input_size, hidden = int(rng.integers(1, 7)), int(rng.integers(1, 6))
    layout = int(rng.integers(0, 2))
    g = GATES[op]
    runtime = bool(rng.integers(0, 2))  # weights as runtime inputs
    p = f"{op.lower()}{index}_"
    x_shape = (batch, steps, input_size) if layout else (steps, batch, input_size)
    state_shape = (batch, d, hidden) if layout else (d, batch, hidden)
    normal = lambda shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    batch_first = (1, 0, 2) if layout else None  # to the reference's time-first layout
    inputs = [parts.tensor(p + "X", normal(x_shape), True, batch_first),
              parts.tensor(p + "W", normal((d, g * hidden, input_size)) * 0.5, runtime),
              parts.tensor(p + "R", normal((d, g * hidden, hidden)) * 0.5, runtime)]
    optional = {}
    if rng.integers(0, 2):
        optional["B"] = parts.tensor(p + "B", normal((d, 2 * g * hidden)) * 0.5, runtime)
    if rng.integers(0, 2):
        lens = rng.integers(1, steps + 1, size=batch).astype(np.int32)
        optional["sequence_lens"] = parts.tensor(p + "lens", lens, True)
    if rng.integers(0, 2):
        optional["initial_h"] = parts.tensor(p + "h0", normal(state_shape), True, batch_first)
    if op == "LSTM":
        if rng.integers(0, 2):
            optional["initial_c"] = parts.tensor(p + "c0", normal(state_shape), True, batch_first)
        if rng.integers(0, 2):
            optional["P"] = parts.tensor(p + "P", normal((d, 3 * hidden)) * 0.5, runtime)
    order = ["B", "sequence_lens", "initial_h"] + (["initial_c", "P"] if op == "LSTM" else [])
    last = max([order.index(k) for k in optional], default=-1)
    inputs += [optional.get(k, "") for k in order[:last + 1]]

    attrs = {"hidden_size": hidden, "layout": layout, "direction": direction}
    if rng.integers(0, 3) == 0:
        attrs["activations"], alphas, betas = random_activations(rng, op, d)
        if alphas:
            attrs["activation_alpha"] = alphas
        if betas:
            attrs["activation_beta"] = betas
    if rng.integers(0, 3) == 0:
        attrs["clip"] = float(rng.uniform(0.2, 2.0))
    if op == "LSTM" and rng.integers(0, 3) == 0:
        attrs["input_forget"] = 1
    if op == "GRU":
        attrs["linear_before_reset"] = int(rng.integers(0, 2))
    outputs = [p + "Y", p + "Y_h"] + ([p + "Y_c"] if op == "LSTM" else [])
    parts.node(op, inputs, outputs, attrs, [(2, 0, 1, 3), (1, 0, 2), (1, 0, 2)])
    return f"{p[:-1]}: {op} X{list(x_shape)} hidden {hidden} " + \
        ", ".join(f"{k}={v}" for k, v in attrs.items() if k != "hidden_size") + \
        f"; inputs {sorted(optional)}; weights {'runtime' if runtime else 'initializers'}"


def add_reverse_sequence(parts, rng, index):
    time_axis = int(rng.integers(0, 2))
    steps, batch = int(rng.integers(1, 6)), int(rng.integers(1, 5))
    shape = [0, 0, int(rng.integers(1, 4))]
    shape[time_axis], shape[1 - time_axis] = steps, batch
    p = f"reversesequence{index}_"
    data = parts.tensor(p + "data", rng.standard_normal(shape).astype(np.float32), True)
    lens = parts.tensor(p + "lens", rng.integers(1, steps + 1, size=batch).astype(np.int64), True)
    parts.node("ReverseSequence", [data, lens], [p + "Y"],
               {"time_axis": time_axis, "batch_axis": 1 - time_axis}, [None])
    return f"{p[:-1]}: ReverseSequence {shape} time_axis {time_axis}"


def check(loom, parts, descriptions, workdir):
    """Compiles and runs one model with loom and ONNX Runtime; returns the failures."""
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, "model.onnx")
    onnx.save(parts.loom.proto(), path)
    artifact = os.path.join(workdir, "model.loom")
    loom_tool.compile_model(loom, path, artifact)
    got = loom_tool.run_model(loom, artifact, parts.loom.feeds, workdir)
    reference_path = os.path.join(workdir, "reference.onnx")
    onnx.save(parts.reference.proto(), reference_path)
    session = onnxruntime.InferenceSession(reference_path, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    want = dict(zip(names, session.run(names, parts.reference.feeds)))
    for name, axes in parts.output_axes.items():
        want[name] = want[name].transpose(axes)
    failures = []
    for name in names:
        node = name[:name.index("_")]
        if name not in got:
            failures.append(f"{name}: loom wrote no such output\n  {descriptions[node]}")
            continue
        if got[name].shape != want[name].shape:
            failures.append(f"{name}: shape {got[name].shape}, ONNX Runtime "
                            f"{want[name].shape}\n  {descriptions[node]}")
            continue
        error = float(np.max(np.abs(got[name] - want[name]), initial=0.0))
        bound = RELATIVE_TOLERANCE * float(np.max(np.abs(want[name]), initial=0.0)) + \
            ABSOLUTE_TOLERANCE
        if not error <= bound:
            failures.append(f"{name}: max|loom - ort| = {error:.3g} > {bound:.3g}\n"
                            f"  {descriptions[node]}")
    return failures, len(names)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--loom", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cases", type=int, default=10, help="layers per operator")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    failures, outputs = [], 0
    for op in ("RNN", "GRU", "LSTM", "ReverseSequence"):
        parts, descriptions = ModelParts(), {}
        for index in range(args.cases):
            key = f"{op.lower()}{index}"
            descriptions[key] = add_reverse_sequence(parts, rng, index) \
                if op == "ReverseSequence" else add_layer(parts, rng, index, op)
        found, checked = check(args.loom, parts, descriptions,
                               os.path.join(args.workdir, op.lower()))
        failures += found
        outputs += checked
    for failure in failures:
        print("FAIL", failure)
    print(f"{outputs - len(failures)} of {outputs} outputs match ONNX Runtime "
          f"(seed {args.seed}, {args.cases} layers per operator)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""Finding the layer where Loom's output first departs from ONNX Runtime's.

::

    report = loom.debug.compare("model.onnx", {"input": x})
    print(report)                   # one row per compared layer, in execution order
    report.first_divergence         # the first row out of tolerance, or None

Loom runs the model once keeping every kernel's output; ONNX Runtime runs it with every node
output made a graph output. A kernel computes a fused group of nodes: its output is the last
node's, compared with ONNX Runtime's value of that node's output. Nodes inside a group have
no value of their own in Loom (compile with ``opt_level=0`` to compare every node), and a
value in a blocked layout (``NCHW8c``) is brought back to ONNX's before comparing.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np

from ._loom import LoomError
from .model import compile as _compile


@dataclasses.dataclass(frozen=True)
class LayerDiff:
    """One compared layer: the kernel, the ONNX node whose output it computes, and how far
    apart the two values are (``ok``: within ``rtol``/``atol``, as ``numpy.allclose``)."""

    kernel: int
    node: str
    op_type: str
    output: str
    shape: Tuple[int, ...]
    max_abs_diff: float
    max_rel_diff: float
    ok: bool
    note: str = ""


@dataclasses.dataclass(frozen=True)
class CompareReport:
    """Every compared layer in execution order, and the kernels that had no ONNX value to
    compare with (name and why)."""

    rows: Tuple[LayerDiff, ...]
    skipped: Tuple[Tuple[str, str], ...]
    rtol: float
    atol: float

    @property
    def first_divergence(self) -> Optional[LayerDiff]:
        """The first layer out of tolerance, or None when every layer agrees."""
        return next((row for row in self.rows if not row.ok), None)

    def __str__(self) -> str:
        lines = [f"{'kernel':>6}  {'ONNX node':<32} {'op':<18} {'max |diff|':>11} "
                 f"{'max rel':>9}  verdict"]
        for row in self.rows:
            verdict = "ok" if row.ok else "DIVERGES"
            lines.append(f"{row.kernel:>6}  {row.node[:32]:<32} {row.op_type[:18]:<18} "
                         f"{row.max_abs_diff:>11.3g} {row.max_rel_diff:>9.3g}  {verdict}"
                         + (f" ({row.note})" if row.note else ""))
        first = self.first_divergence
        lines.append(f"{len(self.rows)} layers compared (rtol={self.rtol:g}, atol={self.atol:g}), "
                     f"{len(self.skipped)} kernels without an ONNX value; "
                     + ("every layer agrees" if first is None else
                        f"first divergence: node '{first.node}' ({first.op_type}), output "
                        f"'{first.output}', kernel {first.kernel}"))
        return "\n".join(lines)


def _load_onnx(model: Any) -> Any:
    import onnx

    if isinstance(model, (str, os.PathLike)):
        return onnx.load(os.fspath(model))
    if isinstance(model, (bytes, bytearray)):
        return onnx.load_from_string(bytes(model))
    if hasattr(model, "SerializeToString"):
        return model
    raise LoomError("loom.debug.compare: expected an ONNX model as a path, bytes or an "
                    f"onnx.ModelProto, got {type(model).__name__}")


def _node_names(graph: Any) -> Dict[str, Any]:
    """The ONNX nodes by the name Loom's importer gives their calls: the node's name, or
    OPTYPE_INDEX for a node without one."""
    return {node.name or f"{node.op_type}_{index}": node for index, node in enumerate(graph.node)}


def _node_of(kernel: str, nodes: Mapping[str, Any]) -> str:
    """The node a kernel's name names: itself, or NODE for the kernels NODE.1, NODE.2, ..."""
    base, _, suffix = kernel.rpartition(".")
    return base if kernel not in nodes and base in nodes and suffix.isdigit() else kernel


def _reference_values(proto: Any, inputs: Mapping[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """Every node output of the main graph, computed by ONNX Runtime."""
    import onnx
    import onnxruntime

    probed = onnx.ModelProto()
    probed.CopyFrom(proto)
    declared = {output.name for output in probed.graph.output}
    for node in probed.graph.node:
        for name in node.output:
            if name and name not in declared:
                probed.graph.output.append(onnx.ValueInfoProto(name=name))
                declared.add(name)
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = onnxruntime.InferenceSession(probed.SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
    names = [output.name for output in session.get_outputs()]
    return dict(zip(names, session.run(names, dict(inputs))))


def _in_onnx_layout(value: np.ndarray, shape: Tuple[int, ...]) -> Tuple[Optional[np.ndarray], str]:
    """Loom's value in the ONNX tensor's layout: as it is, or from a blocked channel layout
    (N, C/c, H, W, c) back to (N, C, H, W); None when neither fits."""
    if value.shape == shape:
        return value, ""
    if (value.ndim == len(shape) + 1 and value.ndim >= 4 and value.shape[0] == shape[0]
            and value.shape[1] * value.shape[-1] == shape[1]
            and value.shape[2:-1] == shape[2:]):
        moved = np.moveaxis(value, -1, 2)  # N, C/c, c, spatial...
        return moved.reshape(shape), f"from NC{'HW'[:len(shape) - 2]}{value.shape[-1]}c"
    return None, f"Loom's shape {value.shape}, ONNX's {shape}"


def compare(model: Any, inputs: Mapping[str, Any], target: str = "llvm", opt_level: int = 3,
            rtol: float = 1e-3, atol: float = 1e-4,
            reference: Optional[Mapping[str, np.ndarray]] = None) -> CompareReport:
    """Runs ``model`` (a path, bytes or an ``onnx.ModelProto``) on ``inputs`` with Loom and with
    ONNX Runtime and compares every layer's output; see the module's text.

    reference: the ONNX tensors' values by name, used instead of running ONNX Runtime (another
    runtime's dump, say).
    """
    proto = _load_onnx(model)
    arrays = {name: np.ascontiguousarray(np.asarray(value)) for name, value in inputs.items()}
    compiled = _compile(proto, target=target, opt_level=opt_level, executor="graph",
                        input_shapes={name: value.shape for name, value in arrays.items()})
    kernels = compiled._impl.intermediates(list(arrays.items()))
    values = dict(reference) if reference is not None else _reference_values(proto, arrays)
    nodes = _node_names(proto.graph)

    # A node imported as several kernels (Conv as a convolution and a bias sum, at opt_level
    # 0) names them NODE, NODE.1, ...: its value is in the last of them.
    kernel_nodes = [_node_of(name, nodes) for name, _, _, _ in kernels]
    last = {(node, kernel[1]): index for index, (node, kernel) in enumerate(zip(kernel_nodes, kernels))}
    rows: List[LayerDiff] = []
    skipped: List[Tuple[str, str]] = []
    for index, (kernel_name, output_index, num_outputs, value) in enumerate(kernels):
        name = kernel_nodes[index]
        node = nodes.get(name)
        why = ("no ONNX node of this name" if node is None
               else "not the node's last kernel" if last[(name, output_index)] != index
               else "its outputs are not the node's" if num_outputs > 1 and num_outputs != len(node.output)
               else "")
        output = node.output[output_index] if not why else ""
        if not why and output not in values:
            why = f"no reference value of '{output}'"
        if why:
            skipped.append((kernel_name, why))
            continue
        expected = np.asarray(values[output])
        actual, note = _in_onnx_layout(np.from_dlpack(value), tuple(expected.shape))
        if actual is None:
            skipped.append((kernel_name, note))
            continue
        diff = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
        scale = np.maximum(np.abs(expected.astype(np.float64)), atol)
        ok = bool(np.allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True))
        rows.append(LayerDiff(index, name, node.op_type, output, tuple(expected.shape),
                              float(np.nanmax(diff)) if diff.size else 0.0,
                              float(np.nanmax(diff / scale)) if diff.size else 0.0, ok, note))
    return CompareReport(tuple(rows), tuple(skipped), rtol, atol)


__all__ = ["CompareReport", "LayerDiff", "compare"]

"""loom.debug.compare: per-layer outputs against ONNX Runtime, the first divergent node."""
import numpy as np
import pytest

import loom
from loom.debug import _reference_values


@pytest.mark.parametrize("opt_level", [0, 3])
def test_every_layer_agrees(small_cnn, image, opt_level):
    report = loom.debug.compare(small_cnn, {"image": image}, opt_level=opt_level)
    assert report.first_divergence is None, str(report)
    compared = [row.node for row in report.rows]
    assert compared[-1] == "softmax"
    if opt_level == 0:  # one kernel per operator: every node has its value
        assert {"conv1", "relu1", "pool1", "conv2", "residual", "gap", "fc"} <= set(compared)
    assert "every layer agrees" in str(report)


def test_finds_the_first_divergent_node(small_cnn, image):
    reference = _reference_values(small_cnn, {"image": image})
    reference["p1"] = reference["p1"].copy()
    reference["p1"][0, 3, 2, 2] += 0.5  # as if Loom's pooling had a bug there
    report = loom.debug.compare(small_cnn, {"image": image}, opt_level=0, reference=reference)
    first = report.first_divergence
    assert first is not None and first.node == "pool1" and first.op_type == "MaxPool"
    assert first.output == "p1" and first.max_abs_diff == pytest.approx(0.5, rel=1e-3)
    assert "first divergence: node 'pool1'" in str(report)


def test_blocked_layouts_are_compared_in_onnx_layout(small_cnn, image):
    report = loom.debug.compare(small_cnn, {"image": image}, opt_level=3)
    notes = [row.note for row in report.rows if row.note]
    # Whether a layer is blocked depends on the CPU; when one is, it was converted back.
    assert all(note.startswith("from NC") for note in notes)


def test_vm_models_are_refused_with_a_hint(tmp_path):
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])
    proto = helper.make_model(
        helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 17)])
    # compare binds the symbolic sizes to the inputs' own, so the graph executor runs it.
    report = loom.debug.compare(proto, {"x": np.array([-1, 2], np.float32)})
    assert report.first_divergence is None and report.rows[0].node == "r"
    with pytest.raises(loom.LoomError, match="expected an ONNX model"):
        loom.debug.compare(3.5, {})

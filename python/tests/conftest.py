"""Shared fixtures of the package's tests: small ONNX models built here and ONNX Runtime as
the reference."""
import os
import sys

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

REPO = os.environ.get("LOOM_SOURCE_DIR",
                      os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BUILD_DIR = os.environ.get("LOOM_BUILD_DIR", os.path.join(REPO, "build"))


def _initializer(name, array):
    return numpy_helper.from_array(np.ascontiguousarray(array), name)


def make_small_cnn(batch=1, seed=0):
    """Conv (bias) -> Relu -> MaxPool -> Conv -> Add (residual) -> GlobalAveragePool ->
    Flatten -> Gemm -> Softmax: what fusion, the blocked layouts and the dense strategies
    all touch, with random weights."""
    rng = np.random.default_rng(seed)
    f32 = np.float32
    inits = [
        _initializer("w1", rng.normal(0, 0.2, (16, 3, 3, 3)).astype(f32)),
        _initializer("b1", rng.normal(0, 0.1, (16,)).astype(f32)),
        _initializer("w2", rng.normal(0, 0.1, (16, 16, 3, 3)).astype(f32)),
        _initializer("wf", rng.normal(0, 0.2, (10, 16)).astype(f32)),
        _initializer("bf", rng.normal(0, 0.1, (10,)).astype(f32)),
    ]
    nodes = [
        helper.make_node("Conv", ["image", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "p1"], ["s2"], name="residual"),
        helper.make_node("GlobalAveragePool", ["s2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "small_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [batch, 3, 16, 16])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [batch, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def ort_run(model, inputs):
    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, inputs)))


@pytest.fixture(scope="session")
def small_cnn():
    return make_small_cnn()


@pytest.fixture(scope="session")
def compiled_cnn(small_cnn):
    import loom

    return loom.compile(small_cnn)


@pytest.fixture
def image():
    return np.random.default_rng(1).uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32)

"""loom.compile, loom.load, running and timing models, against ONNX Runtime."""
import os

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper

import loom
from conftest import make_small_cnn, ort_run


def test_compile_and_run_matches_onnxruntime(small_cnn, compiled_cnn, image):
    expected = ort_run(small_cnn, {"image": image})["probs"]
    outputs = compiled_cnn(image)
    assert list(outputs) == ["probs"]
    assert outputs["probs"].dtype == np.float32
    np.testing.assert_allclose(outputs["probs"], expected, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(compiled_cnn.run(image=image)["probs"], expected, rtol=1e-4,
                               atol=1e-6)


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
def test_every_opt_level_from_path_bytes_and_proto(small_cnn, image, tmp_path, opt_level):
    expected = ort_run(small_cnn, {"image": image})["probs"]
    path = tmp_path / "cnn.onnx"
    onnx.save(small_cnn, path)
    for source in (path, str(path), small_cnn.SerializeToString(), small_cnn):
        model = loom.compile(source, opt_level=opt_level)
        np.testing.assert_allclose(model(image)["probs"], expected, rtol=1e-4, atol=1e-6)


def test_inputs_and_outputs(compiled_cnn):
    assert compiled_cnn.inputs == [loom.TensorSpec("image", "float32", (1, 3, 16, 16))]
    assert compiled_cnn.outputs == [loom.TensorSpec("probs", "float32", (1, 10))]
    assert compiled_cnn.executor == "graph"
    assert "image" in repr(compiled_cnn)


def test_export_and_load(compiled_cnn, image, tmp_path):
    path = tmp_path / "cnn.so"
    compiled_cnn.export(path)
    loaded = loom.load(path)
    assert loaded.inputs == compiled_cnn.inputs and loaded.outputs == compiled_cnn.outputs
    np.testing.assert_array_equal(loaded(image)["probs"], compiled_cnn(image)["probs"])
    # A loaded model exports its artifact again.
    again = tmp_path / "again.so"
    loaded.export(again)
    np.testing.assert_array_equal(loom.load(again)(image)["probs"], compiled_cnn(image)["probs"])


def test_inputs_as_torch_nd_and_lists(compiled_cnn, image):
    expected = compiled_cnn(image)["probs"]
    np.testing.assert_array_equal(compiled_cnn(torch.from_numpy(image))["probs"], expected)
    np.testing.assert_array_equal(compiled_cnn(loom.nd.array(image))["probs"], expected)
    np.testing.assert_array_equal(compiled_cnn(image.tolist())["probs"], expected)
    # Not row-major: made so before the run.
    transposed = np.ascontiguousarray(image.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)
    assert not transposed.flags.c_contiguous
    np.testing.assert_array_equal(compiled_cnn(transposed)["probs"], expected)


def test_run_dlpack_returns_tensors_of_their_own(compiled_cnn, image):
    first = compiled_cnn.run_dlpack(image)["probs"]
    assert isinstance(first, loom.nd.NDArray) and first.shape == (1, 10)
    as_torch = torch.from_dlpack(first)
    assert as_torch.data_ptr() == first.data_ptr  # shared, not copied
    snapshot = as_torch.clone()
    compiled_cnn(-image)  # another run does not touch outputs already returned
    assert torch.equal(as_torch, snapshot)


def test_benchmark(compiled_cnn, image):
    result = compiled_cnn.benchmark(repeat=5, warmup=1, threads=1)
    assert result.repeat == 5 and result.threads == 1
    assert 0 < result.min_ms <= result.median_ms <= result.max_ms
    assert "median_ms=" in str(result)
    given = compiled_cnn.benchmark(repeat=2, inputs={"image": image})
    assert given.repeat == 2


def test_a_model_exported_from_pytorch(tmp_path):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8),
                              torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                              torch.nn.Linear(8, 4)).eval()
    x = torch.randn(2, 3, 12, 12)
    path = tmp_path / "net.onnx"
    torch.onnx.export(net, x, str(path), input_names=["x"], output_names=["y"], opset_version=13)
    model = loom.compile(path)
    with torch.no_grad():
        expected = net(x).numpy()
    np.testing.assert_allclose(model(x)["y"], expected, rtol=1e-4, atol=1e-5)


def _dynamic_batch_model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])
    nodes = [helper.make_node("Sigmoid", ["x"], ["s"], name="sigmoid"),
             helper.make_node("Mul", ["s", "x"], ["y"], name="swish")]
    return helper.make_model(helper.make_graph(nodes, "swish", [x], [y]),
                             opset_imports=[helper.make_opsetid("", 17)])


def test_symbolic_dimensions_run_on_the_vm_or_are_bound():
    proto = _dynamic_batch_model()
    model = loom.compile(proto)
    assert model.executor == "vm"
    assert model.inputs == [loom.TensorSpec("x", "float32", (None, 4))]
    assert model.outputs == [loom.TensorSpec("y", None, None)]
    for n in (1, 3, 7):
        x = np.linspace(-3, 3, n * 4, dtype=np.float32).reshape(n, 4)
        np.testing.assert_allclose(model(x)["y"], ort_run(proto, {"x": x})["y"], rtol=1e-5,
                                   atol=1e-6)
    with pytest.raises(loom.LoomError, match="symbolic shape"):
        model.benchmark(repeat=1)
    bound = loom.compile(proto, input_shapes={"x": (5, 4)})
    assert bound.executor == "graph" and bound.inputs[0].shape == (5, 4)


def test_records_and_precision_options(small_cnn, image, tmp_path):
    expected = ort_run(small_cnn, {"image": image})["probs"]
    empty = tmp_path / "none.jsonl"
    empty.write_text("")
    model = loom.compile(small_cnn, records=empty, shipped_records=False, precision="bf16")
    np.testing.assert_allclose(model(image)["probs"], expected, rtol=0.05, atol=0.02)


def test_version_follows_the_project():
    header = os.path.join(os.environ.get("LOOM_SOURCE_DIR", ""), "include/loom/support/version.h")
    if not os.path.exists(header):
        pytest.skip("LOOM_SOURCE_DIR is not set")
    assert f'"{loom.__version__}"' in open(header).read()


def test_bool_outputs_and_strided_torch_inputs():
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [3, 2])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [3, 2])
    out = helper.make_tensor_value_info("gt", TensorProto.BOOL, [3, 2])
    proto = helper.make_model(
        helper.make_graph([helper.make_node("Greater", ["a", "b"], ["gt"], name="greater")],
                          "g", [a, b], [out]), opset_imports=[helper.make_opsetid("", 17)])
    model = loom.compile(proto)
    assert model.outputs == [loom.TensorSpec("gt", "bool", (3, 2))]
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3).t()  # a transposed view
    y = torch.full((3, 2), 2.5)
    got = model(x, y)["gt"]
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, (x > y).numpy())

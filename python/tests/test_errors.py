"""Bad input raises loom.LoomError (a ValueError) with Loom's message; nothing aborts."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import loom


def test_error_classes():
    assert issubclass(loom.LoomError, ValueError)
    assert issubclass(loom.InternalError, RuntimeError)
    assert not issubclass(loom.InternalError, loom.LoomError)


def test_wrong_input_shape_dtype_name_and_count(compiled_cnn, image):
    with pytest.raises(loom.LoomError, match=r"input 'image' expects shape \[1, 3, 16, 16\]"):
        compiled_cnn(np.zeros((2, 3, 16, 16), np.float32))
    with pytest.raises(loom.LoomError, match="image.*float32"):
        compiled_cnn(image.astype(np.float64))
    with pytest.raises(loom.LoomError, match="has no input 'picture'; its inputs: image"):
        compiled_cnn(picture=image)
    with pytest.raises(loom.LoomError, match="input 'image' is missing"):
        compiled_cnn()
    with pytest.raises(loom.LoomError, match="takes 1 input"):
        compiled_cnn(image, image)
    with pytest.raises(loom.LoomError, match="both positionally and by name"):
        compiled_cnn(image, image=image)
    with pytest.raises(loom.LoomError, match="given twice"):
        compiled_cnn._impl.run([("image", image), ("image", image)], 0)
    # The model still runs after every refusal.
    assert compiled_cnn(image)["probs"].shape == (1, 10)


def test_not_a_tensor(compiled_cnn):
    with pytest.raises((loom.LoomError, ValueError, TypeError)):
        compiled_cnn(object())


def test_bad_models(tmp_path):
    with pytest.raises(loom.LoomError, match="missing.onnx"):
        loom.compile(tmp_path / "missing.onnx")
    with pytest.raises(loom.LoomError):
        loom.compile(b"this is not a model")
    with pytest.raises(loom.LoomError, match="expected an ONNX model"):
        loom.compile(42)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    unsupported = helper.make_model(
        helper.make_graph([helper.make_node("NoSuchOp", ["x"], ["y"], name="odd")], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(loom.LoomError, match="NoSuchOp"):
        loom.compile(unsupported)


def test_bad_options(small_cnn):
    with pytest.raises(loom.LoomError, match="opt"):
        loom.compile(small_cnn, opt_level=7)
    with pytest.raises(loom.LoomError, match="executor"):
        loom.compile(small_cnn, executor="fast")
    with pytest.raises(loom.LoomError):
        loom.compile(small_cnn, target="no-such-target")
    with pytest.raises(loom.LoomError, match="records"):
        loom.compile(small_cnn, records="/nonexistent/records.jsonl")
    with pytest.raises(loom.LoomError):
        loom.compile(small_cnn, input_shapes={"image": (1, 3)})


def test_corrupt_artifact(compiled_cnn, tmp_path):
    path = tmp_path / "cnn.so"
    compiled_cnn.export(path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(loom.LoomError, match="cnn.so"):
        loom.load(path)
    with pytest.raises(loom.LoomError):
        loom.load(tmp_path / "nothing.so")


def test_bad_thread_count(compiled_cnn):
    with pytest.raises(loom.LoomError, match="SetNumThreads"):
        compiled_cnn.benchmark(repeat=1, threads=100000)

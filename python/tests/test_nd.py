"""loom.nd: DLPack both ways with NumPy and PyTorch, without copies (same data pointer)."""
import gc

import numpy as np
import pytest
import torch

import loom


def test_numpy_to_loom_to_numpy_shares_memory():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    view = loom.nd.from_dlpack(a)
    assert view.shape == (3, 4) and view.dtype == "float32" and view.device == "cpu:0"
    assert view.data_ptr == a.ctypes.data
    back = np.from_dlpack(view)
    assert back.ctypes.data == a.ctypes.data
    a[1, 2] = 42  # one memory: every view sees the write
    assert back[1, 2] == 42


def test_torch_to_loom_to_torch_shares_memory():
    t = torch.arange(10, dtype=torch.int64)
    view = loom.nd.from_dlpack(t)
    assert view.dtype == "int64" and view.data_ptr == t.data_ptr()
    back = torch.from_dlpack(view)
    assert back.data_ptr() == t.data_ptr()
    t[3] = -1
    assert back[3] == -1


def test_loom_array_to_numpy_and_torch():
    owned = loom.nd.array(np.ones((2, 5), np.float32) * 3)
    as_numpy = np.from_dlpack(owned)
    as_torch = torch.from_dlpack(owned)
    assert as_numpy.ctypes.data == owned.data_ptr == as_torch.data_ptr()
    as_torch += 1
    assert as_numpy[0, 0] == 4
    np.testing.assert_array_equal(owned.numpy(), as_numpy)
    assert owned.numpy().ctypes.data != owned.data_ptr  # numpy() copies
    np.testing.assert_array_equal(np.asarray(owned), as_numpy)


def test_memory_outlives_the_producer():
    a = np.arange(6, dtype=np.float64)
    view = loom.nd.from_dlpack(a)
    del a
    gc.collect()
    np.testing.assert_array_equal(np.from_dlpack(view), np.arange(6))
    owned = loom.nd.array([1, 2, 3], dtype="int32")
    t = torch.from_dlpack(owned)
    del owned
    gc.collect()
    assert t.tolist() == [1, 2, 3]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "uint8", "int32", "int64",
                                   "float16"])
def test_dtypes_round_trip(dtype):
    a = (np.arange(24) % 7).astype(dtype).reshape(2, 3, 4)
    view = loom.nd.from_dlpack(a)
    assert view.dtype == dtype and view.shape == (2, 3, 4) and view.nbytes == a.nbytes
    np.testing.assert_array_equal(np.from_dlpack(view), a)


def test_strided_views_keep_their_strides():
    a = np.arange(20, dtype=np.float32).reshape(4, 5)[:, 1:4]
    view = loom.nd.from_dlpack(a)
    assert view.shape == (4, 3)
    np.testing.assert_array_equal(np.from_dlpack(view), a)


def test_capsules_and_errors():
    a = np.zeros(3, np.float32)
    capsule = a.__dlpack__()
    loom.nd.from_dlpack(capsule)
    with pytest.raises(loom.LoomError, match="already consumed"):
        loom.nd.from_dlpack(capsule)
    with pytest.raises(loom.LoomError, match="expected a tensor"):
        loom.nd.from_dlpack([1, 2, 3])
    unconsumed = loom.nd.array([1.0]).__dlpack__()
    del unconsumed  # its destructor frees the export
    with pytest.raises(loom.LoomError, match="copyfrom"):
        loom.nd.empty((2,), "float32").copyfrom(np.zeros(3, np.float32))
    with pytest.raises(loom.LoomError):
        loom.nd.empty((2,), "float33")


def test_copyfrom_and_empty():
    target = loom.nd.empty((2, 2), "float32")
    target.copyfrom(torch.full((2, 2), 7.0))
    assert np.from_dlpack(target).tolist() == [[7, 7], [7, 7]]
    assert "shape=" in repr(target)


def test_bool_tensors_cross_both_ways():
    flags = np.array([True, False, True])
    view = loom.nd.from_dlpack(flags)
    assert view.dtype == "bool" and view.data_ptr == flags.ctypes.data
    back = np.from_dlpack(view)
    assert back.dtype == np.bool_ and back.tolist() == [True, False, True]
    assert loom.nd.array([False, True]).numpy().tolist() == [False, True]
    # (PyTorch 1.13 has no bool in its DLPack; later versions export and take kDLBool.)


def test_bad_arguments_are_loom_errors():
    with pytest.raises(loom.LoomError, match="needs more than 2\\^63 bytes"):
        loom.nd.empty((1 << 62,), "float32")
    with pytest.raises(loom.LoomError, match="within 64 bits"):
        loom.nd.empty((1 << 70,), "float32")
    a = loom.nd.array([1.0, 2.0])
    with pytest.raises(loom.LoomError, match="dl_device"):
        a.__dlpack__(dl_device="x")
    with pytest.raises(loom.LoomError, match="copy must be"):
        a.__dlpack__(copy="yes")
    with pytest.raises(loom.LoomError, match="NumPy has no bfloat16"):
        loom.nd.empty((2,), "bfloat16").numpy()
    with pytest.raises(loom.LoomError, match="NumPy has no float32x4"):
        loom.nd.empty((2,), "float32x4").numpy()

    class NotATensor:
        def __dlpack__(self):
            return 5

    with pytest.raises(loom.LoomError, match="returned int, not a DLPack capsule"):
        loom.nd.from_dlpack(NotATensor())
    copied = np.from_dlpack(type("Copy", (), {"__dlpack__": lambda self, **kw: a.__dlpack__(copy=True),
                                              "__dlpack_device__": lambda self: (1, 0)})())
    assert copied.ctypes.data != a.data_ptr and copied.tolist() == [1.0, 2.0]

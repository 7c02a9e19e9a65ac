"""loom.lower and loom.build: compiled functions against NumPy, zero-copy arguments, checks."""
import threading

import numpy as np
import pytest

import loom
from loom import te, tir

torch = pytest.importorskip("torch")


def aligned_empty(shape, dtype, alignment=64):
    """A NumPy array whose data starts on an `alignment`-byte boundary."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    raw = np.empty(nbytes + alignment, np.uint8)
    offset = (-raw.ctypes.data) % alignment
    return raw[offset:offset + nbytes].view(dtype).reshape(shape)


def rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.uniform(-1, 1, shape).astype(dtype)
    return rng.integers(-50, 50, shape).astype(dtype)


def add_module(n, dtype):
    A = te.placeholder((n,), dtype, "A")
    B = te.placeholder((n,), dtype, "B")
    C = te.compute((n,), lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=8)
    s[C].vectorize(xi)
    return loom.build(s, [A, B, C], target="llvm", name="add")


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int8", "int64", "uint8"])
def test_elementwise_add_every_dtype(dtype):
    mod = add_module(67, dtype)
    a, b = rand(67, dtype, 1), rand(67, dtype, 2)
    c = np.zeros(67, dtype)
    mod.add(a, b, c)
    np.testing.assert_array_equal(c, (a + b).astype(dtype))


def test_module_access_and_repr():
    mod = add_module(16, "float32")
    assert mod.function_names == ["add"] and "add" in mod
    assert repr(mod["add"]) == ("loom.build.Function(add(A: float32[16], B: float32[16], "
                                "C: float32[16]))")
    assert repr(mod).startswith("loom.build.Module(functions=[add], target=\"llvm")
    assert mod.target.startswith("llvm")
    a, b = rand(16, "float32", 1), rand(16, "float32", 2)
    for call in (mod, mod["add"], mod.add, mod.get_function("add")):
        c = np.zeros(16, np.float32)
        call(a, b, c)
        np.testing.assert_allclose(c, a + b)
    with pytest.raises(AttributeError, match="no function or attribute 'sub'"):
        mod.sub
    with pytest.raises(loom.LoomError, match="no function 'sub'"):
        mod["sub"]
    assert isinstance(mod.add.func, tir.PrimFunc)


def test_matmul_scheduled_against_numpy():
    n = 128
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), "k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 32, 32)
    ko, ki = s[C].split(k, factor=4)
    s[C].reorder(xo, yo, ko, xi, ki, yi)
    s[C].vectorize(yi)
    s[C].parallel(xo)
    func = loom.lower(s, [A, B, C], name="matmul")
    assert func.name == "matmul" and "T.parallel" in func.script()
    assert str(func) == func.script() and repr(func) == "PrimFunc(matmul(A, B, C))"
    mod = loom.build(func)
    a, b = rand((n, n), "float32", 1), rand((n, n), "float32", 2)
    c = np.zeros((n, n), np.float32)
    mod.matmul(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    # The interpreter agrees.
    c2 = np.zeros_like(c)
    tir.interpret(func, a, b, c2)
    np.testing.assert_allclose(c2, c, rtol=1e-5, atol=1e-5)


def test_reductions_and_math():
    A = te.placeholder((16, 33), name="A")
    k = te.reduce_axis((0, 33), "k")
    M = te.compute((16,), lambda i: te.max(A[i, k], axis=k), name="M")
    E = te.compute((16, 33), lambda i, j: tir.exp(A[i, j] - M[i]), name="E")
    k2 = te.reduce_axis((0, 33), "k2")
    S = te.compute((16,), lambda i: te.sum(E[i, k2], axis=k2), name="S")
    Y = te.compute((16, 33), lambda i, j: E[i, j] / S[i], name="softmax")
    s = te.create_schedule(Y.op)
    mod = loom.build(s, [A, Y], name="softmax")
    a = rand((16, 33), "float32", 3)
    y = np.zeros_like(a)
    mod.softmax(a, y)
    e = np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_zero_copy_numpy_written_in_place():
    mod = add_module(64, "float32")
    a, b = aligned_empty(64, np.float32), aligned_empty(64, np.float32)
    a[:] = np.arange(64)
    b[:] = 1
    c = aligned_empty(64, np.float32)
    c[:] = -1
    # The array the function receives is the NumPy array's memory, not a copy.
    assert loom.nd.from_dlpack(c).data_ptr == c.ctypes.data
    mod.add(a, b, c)
    np.testing.assert_array_equal(c, np.arange(64) + 1)
    # A view into a larger array: written where it lies.
    big = aligned_empty((2, 64), np.float32)
    big[:] = 0
    mod.add(a, b, big[1])
    np.testing.assert_array_equal(big[0], 0)
    np.testing.assert_array_equal(big[1], np.arange(64) + 1)
    # An unaligned NumPy array still works (staged through an aligned copy), in place too.
    raw = aligned_empty(65, np.float32)
    unaligned = raw[1:]
    mod.add(a, b, unaligned)
    np.testing.assert_array_equal(unaligned, np.arange(64) + 1)


def test_torch_tensors_and_loom_arrays_as_arguments():
    mod = add_module(32, "float32")
    a = torch.arange(32, dtype=torch.float32)
    b = torch.ones(32, dtype=torch.float32)
    c = torch.zeros(32, dtype=torch.float32)
    mod.add(a, b, c)
    assert torch.equal(c, a + 1)
    la = loom.nd.from_dlpack(np.arange(32, dtype=np.float32))
    lc = loom.nd.empty((32,), "float32")
    mod.add(la, b, lc)
    np.testing.assert_array_equal(lc.numpy(), np.arange(32) + 1)


def test_argument_errors():
    mod = add_module(16, "float32")
    a, b, c = (np.zeros(16, np.float32) for _ in range(3))
    with pytest.raises(loom.LoomError, match=r"add\(\): takes 3 arguments, got 2"):
        mod.add(a, b)
    with pytest.raises(loom.LoomError, match="expected dtype float32, got float64"):
        mod.add(a, b, np.zeros(16))
    with pytest.raises(loom.LoomError, match=r"expected shape float32\[16\], got \[8\]"):
        mod.add(a, b, np.zeros(8, np.float32))
    with pytest.raises(loom.LoomError, match="expected 1 dimensions"):
        mod.add(a, b, np.zeros((4, 4), np.float32))
    with pytest.raises(loom.LoomError, match="not contiguous"):
        mod.add(a, b, np.zeros(32, np.float32)[::2])
    with pytest.raises(loom.LoomError, match="not contiguous"):
        mod.add(a, b, torch.zeros(32)[::2])
    with pytest.raises(loom.LoomError, match="expected a tensor"):
        mod.add(a, b, [0.0] * 16)
    with pytest.raises(loom.LoomError, match="give args"):
        loom.build(te.create_schedule(te.placeholder((2,)).op))
    with pytest.raises(loom.LoomError):
        loom.build(mod.add.func, target="no-such-target")


def test_symbolic_shapes_are_bound_consistently():
    n = te.size_var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    mod = loom.build(te.create_schedule(B.op), [A, B], name="double")
    for size in (1, 7, 100):
        a = rand(size, "float32", size)
        b = np.zeros_like(a)
        mod.double(a, b)
        np.testing.assert_allclose(b, a * 2)
    with pytest.raises(loom.LoomError, match="dimension 0 is 5, not 7"):
        mod.double(np.zeros(7, np.float32), np.zeros(5, np.float32))


def test_several_functions_in_one_module_and_threads():
    fs = []
    for name, fn in (("plus", lambda x: x + 1.0), ("times", lambda x: x * 3.0)):
        A = te.placeholder((256,), name="A")
        B = te.compute((256,), lambda i: fn(A[i]), name="B")
        fs.append(loom.lower(te.create_schedule(B.op), [A, B], name=name))
    mod = loom.build(fs)
    assert mod.function_names == ["plus", "times"]
    with pytest.raises(loom.LoomError, match="several functions"):
        mod(np.zeros(256, np.float32), np.zeros(256, np.float32))
    a = rand(256, "float32", 5)
    results = {}

    def worker(index):
        out = np.zeros(256, np.float32)
        for _ in range(20):
            (mod.plus if index % 2 else mod.times)(a, out)
        results[index] = out

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for index, out in results.items():
        np.testing.assert_allclose(out, a + 1 if index % 2 else a * 3, rtol=1e-6)


def test_interpret_errors():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    f = loom.lower(te.create_schedule(B.op), [A, B])
    with pytest.raises(loom.LoomError, match="takes 2 arguments, got 1"):
        tir.interpret(f, np.zeros(4, np.float32))
    with pytest.raises(loom.LoomError):
        tir.interpret(f, np.zeros(4, np.float32), np.zeros(3, np.float32))


def test_lowering_while_another_thread_changes_the_schedule():
    # Lowering reads the schedule's stages, which primitives on another thread change: it
    # must hold the GIL (it once released it, and the readers saw half-changed stages:
    # IndexError unordered_map::at, or a crash).
    import sys
    import time
    A = te.placeholder((64, 64), name="A")
    B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((64, 64), lambda i, j: B[i, j] + 1.0, name="C")
    s = te.create_schedule(C.op)
    errors = []
    deadline = time.monotonic() + 1.2

    def lower():
        try:
            while time.monotonic() < deadline:
                loom.lower(s, [A, C], "f")
        except Exception as error:  # reported below
            errors.append(error)

    def mutate():
        try:
            i, j = C.op.axis
            while time.monotonic() < deadline:
                s[B].compute_at(s[C], i)
                s[C].reorder(j, i)
                s[B].compute_root()
                s[C].reorder(i, j)
        except Exception as error:
            errors.append(error)

    threads = [threading.Thread(target=lower) for _ in range(6)]
    threads.append(threading.Thread(target=mutate))
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors


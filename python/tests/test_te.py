"""loom.te: tensor expressions, every schedule primitive, and the errors a user meets."""
import numpy as np
import pytest

import loom
from loom import te, tir


def matmul(n=64, m=64, l=64, dtype="float32"):
    A = te.placeholder((n, l), dtype, "A")
    B = te.placeholder((l, m), dtype, "B")
    k = te.reduce_axis((0, l), "k")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C, k


def rand(*shape, dtype="float32", seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(dtype)


def run(s, args, arrays, interpret=False):
    """Builds (or interprets) and runs; returns the arrays."""
    if interpret:
        loom.tir.interpret(loom.lower(s, args, "f"), *arrays)
    else:
        loom.build(s, args, name="f")(*arrays)
    return arrays


def check_matmul(s, A, B, C, interpret=False):
    a, b = rand(*[int(d) for d in A.shape], seed=1), rand(*[int(d) for d in B.shape], seed=2)
    c = np.zeros([int(d) for d in C.shape], np.float32)
    run(s, [A, B, C], [a, b, c], interpret)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- tensors and computes

def test_placeholder_compute_and_tensor_attributes():
    A, B, C, k = matmul(32, 16, 8)
    assert [int(d) for d in C.shape] == [32, 16]
    assert C.dtype == "float32" and C.ndim == 2 and C.name == "C"
    assert C.op.name == "C" and C.op.kind == "compute" and A.op.kind == "placeholder"
    assert [iv.name for iv in C.op.axis] == ["i", "j"]
    assert [iv.name for iv in C.op.reduce_axis] == ["k"]
    assert C.op.reduce_axis[0] == k
    assert C.op.input_tensors == [A, B]
    assert C.op == C.op and hash(C.op) == hash(C.op) and C.op != A.op
    assert C.op.output(0) == C
    assert repr(C) == "Tensor(shape=[32, 16], op.name=C, dtype=float32)"
    assert str(A[1, 2]) == "A[1, 2]" and str(A(1, 2)) == "A[1, 2]"
    assert "k" in repr(k) and k.iter_type == "CommReduce"


def test_compute_of_any_rank_and_symbolic_shapes():
    n = te.size_var("n")
    A = te.placeholder((n, 2, 3, 4, 5), name="A")
    B = te.compute(A.shape, lambda a, b, c, d, e: A[a, b, c, d, e] * 2.0, name="B")
    assert [iv.name for iv in B.op.axis] == ["i", "j", "k", "l", "ax4"]
    s = te.create_schedule(B.op)
    a = rand(3, 2, 3, 4, 5)
    b = np.zeros_like(a)
    loom.build(s, [A, B])(a, b)
    np.testing.assert_allclose(b, a * 2)
    one = te.compute(7, lambda i: i * 2, name="one")  # an int shape: 1-d
    assert [int(d) for d in one.shape] == [7] and one.dtype == "int32"


def test_multi_output_compute_and_tuple_reducer():
    A = te.placeholder((4, 6), "float32", "A")
    idx = te.placeholder((4, 6), "int32", "idx")
    k = te.reduce_axis((0, 6), "k")

    def combine(x, y):
        keep = x[1] >= y[1]
        return tir.select(keep, x[0], y[0]), tir.select(keep, x[1], y[1])

    def identity(t0, t1):
        return tir.const(-1, t0), te.min_value(t1)

    argmax = te.comm_reducer(combine, identity, name="argmax")
    assert repr(argmax) == "CommReducer('argmax')"
    I, V = te.compute((4,), lambda i: argmax((idx[i, k], A[i, k]), axis=k), name="argmax")
    assert I.dtype == "int32" and V.dtype == "float32" and I.op == V.op
    s = te.create_schedule(I.op)
    a = rand(4, 6)
    ids = np.tile(np.arange(6, dtype=np.int32), (4, 1))
    i_out, v_out = np.zeros(4, np.int32), np.zeros(4, np.float32)
    loom.build(s, [A, idx, I, V])(a, ids, i_out, v_out)
    np.testing.assert_array_equal(i_out, a.argmax(axis=1))
    np.testing.assert_allclose(v_out, a.max(axis=1))
    # Two outputs of an elementwise function.
    P, Q = te.compute((4, 6), lambda i, j: (A[i, j] + 1.0, A[i, j] * 2.0), name="pq")
    assert P.op.num_outputs == 2 and Q.value_index == 1


def test_reducers_and_where():
    A = te.placeholder((8, 10), name="A")
    k = te.reduce_axis((0, 10), "k")
    outs = {
        "sum": te.compute((8,), lambda i: te.sum(A[i, k], axis=k), "s"),
        "max": te.compute((8,), lambda i: te.max(A[i, k], axis=k), "mx"),
        "min": te.compute((8,), lambda i: te.min(A[i, k], axis=[k]), "mn"),
        "prod": te.compute((8,), lambda i: te.prod(A[i, k], axis=k), "p"),
        "even": te.compute((8,), lambda i: te.sum(A[i, k], axis=k, where=k % 2 == 0), "ev"),
    }
    a = rand(8, 10)
    expected = {"sum": a.sum(1), "max": a.max(1), "min": a.min(1), "prod": a.prod(1),
                "even": a[:, ::2].sum(1)}
    for name, T in outs.items():
        s = te.create_schedule(T.op)
        out = np.zeros(8, np.float32)
        loom.build(s, [A, T])(a, out)
        np.testing.assert_allclose(out, expected[name], rtol=1e-5, atol=1e-6, err_msg=name)
    # te.max / te.min of two values are elementwise.
    x = tir.Var("x", "float32")
    assert str(te.max(x, 0.0)) == "T.max(x, T.float32(0.0))"


def test_extern_thread_axis_and_misc_helpers():
    A = te.placeholder((16,), name="A")
    B = te.extern((16,), [A], lambda ins, outs: tir.call_extern(
        "int32", "my_copy", outs[0].access_ptr(2), ins[0].access_ptr(1), 16), name="B")
    assert B.op.kind == "extern" and B.dtype == "float32"
    text = str(loom.lower(te.create_schedule(B.op), [A, B], "ext"))
    assert 'T.call_extern("int32", "my_copy"' in text
    tx = te.thread_axis("threadIdx.x")
    assert tx.thread_tag == "threadIdx.x" and tx.iter_type == "ThreadIndex"
    vt = te.thread_axis((0, 2), "vthread")
    assert vt.iter_type == "VirtualThread" and int(vt.dom.extent) == 2
    assert str(te.max_value("int8")) == "T.int8(127)"
    assert te.var("n").dtype == "int32" and te.const(2.5).dtype == "float32"


# ---------------------------------------------------------------- every primitive

def test_split_factor_and_nparts_tile_reorder():
    A, B, C, k = matmul()
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=32)
    yo, yi = s[C].split(C.op.axis[1], nparts=4)
    ko, ki = s[C].split(k, 16)
    s[C].reorder(xo, yo, ko, xi, ki, yi)
    assert [iv.name for iv in s[C].leaf_iter_vars] == [
        "i.outer", "j.outer", "k.outer", "i.inner", "k.inner", "j.inner"]
    text = str(te.schedule_to_primfunc(s, [A, B, C], "mm"))
    assert "for i.outer in range(2):" in text and "for j.outer in range(4):" in text
    assert "for j.inner in range(16):" in text
    check_matmul(s, A, B, C)

    s = te.create_schedule(C.op)
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], x_factor=16, y_factor=8)
    assert [iv.name for iv in s[C].leaf_iter_vars] == [
        "i.outer", "j.outer", "i.inner", "j.inner", "k"]
    check_matmul(s, A, B, C)


def test_fuse_vectorize_unroll_parallel_pragma():
    A = te.placeholder((16, 8, 4), name="A")
    B = te.compute(A.shape, lambda i, j, l: A[i, j, l] + 1.0, name="B")
    s = te.create_schedule(B.op)
    i, j, l = B.op.axis
    fused = s[B].fuse(i, j)
    assert fused.name == "i.j.fused"
    fo, fi = s[B].split(fused, factor=8)
    s[B].parallel(fo)
    s[B].unroll(fi)
    s[B].vectorize(l)
    s[B].pragma(fo, "auto_unroll_max_step", 16)
    text = str(te.schedule_to_primfunc(s, [A, B], "f"))
    assert "T.parallel" in text and "T.unroll" in text and "T.vectorized" in text
    assert "pragma_auto_unroll_max_step" in text
    a = rand(16, 8, 4)
    b = np.zeros_like(a)
    loom.build(s, [A, B])(a, b)
    np.testing.assert_allclose(b, a + 1)
    # fuse of three axes, varargs.
    s = te.create_schedule(B.op)
    assert s[B].fuse(*B.op.axis).name == "i.j.fused.k.fused"


def test_compute_at_inline_root():
    A = te.placeholder((32, 32), name="A")
    B = te.compute(A.shape, lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute(A.shape, lambda i, j: B[i, j] + 1.0, name="C")
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=8)
    s[B].compute_at(s[C], xo)
    assert s[B].attach_type == "scope" and s[B].attach_stage == s[C]
    assert s[B].attach_ivar == xo
    text = str(te.schedule_to_primfunc(s, [A, C], "f"))
    assert text.index("for i.outer") < text.index("B[")
    a = rand(32, 32)
    c = np.zeros_like(a)
    loom.build(s, [A, C])(a, c)
    np.testing.assert_allclose(c, a * 2 + 1)

    s[B].compute_inline()
    assert s[B].attach_type == "inline"
    assert "B[" not in str(te.schedule_to_primfunc(s, [A, C], "f"))
    s[B].compute_root()
    assert s[B].attach_type == "root"
    c[:] = 0
    loom.build(s, [A, C])(a, c)
    np.testing.assert_allclose(c, a * 2 + 1)


def test_bind_set_scope_storage_align_double_buffer():
    A = te.placeholder((64, 64), name="A")
    B = te.compute(A.shape, lambda i, j: A[i, j] + 1.0, name="B")
    C = te.compute(A.shape, lambda i, j: B[i, j] * 2.0, name="C")
    s = te.create_schedule(C.op)
    bo, bi = s[C].split(C.op.axis[0], factor=16)
    s[C].bind(bo, te.thread_axis("blockIdx.x"))
    s[C].bind(bi, te.thread_axis("threadIdx.x"))
    s[B].compute_at(s[C], bi)
    s[B].set_scope("local")
    assert s[B].scope == "local"
    text = str(loom.lower(s, [A, C], "gpu"))
    assert "blockIdx.x" in text and "threadIdx.x" in text and '"local"' in text

    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=8)
    s[B].compute_at(s[C], xo)
    s[B].storage_align(B.op.axis[0], 16, 1)
    s[B].double_buffer()
    text = str(loom.lower(s, [A, C], "f"))
    a = rand(64, 64)
    c = np.zeros_like(a)
    loom.tir.interpret(loom.lower(s, [A, C], "f"), a, c)
    np.testing.assert_allclose(c, (a + 1) * 2)


def test_cache_read_cache_write_rfactor():
    A, B, C, k = matmul(32, 32, 32)
    s = te.create_schedule(C.op)
    AA = s.cache_read(A, "local", [C])
    CC = s.cache_write(C, "local")
    assert AA.name == "A.local" and CC.name == "C.local"
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 8, 8)
    s[CC].compute_at(s[C], yo)
    s[AA].compute_at(s[CC], s[CC].op.reduce_axis[0])
    assert [st.name for st in s.stages][:2] == ["A", "A.local"]
    check_matmul(s, A, B, C, interpret=True)

    A = te.placeholder((64,), name="A")
    k = te.reduce_axis((0, 64), "k")
    S = te.compute((1,), lambda i: te.sum(A[k], axis=k), name="S")
    s = te.create_schedule(S.op)
    ko, ki = s[S].split(k, factor=8)
    SF = s.rfactor(S, ki)
    assert [int(d) for d in SF.shape] == [8, 1]
    a = rand(64)
    out = np.zeros(1, np.float32)
    loom.build(s, [A, S])(a, out)
    np.testing.assert_allclose(out, [a.sum()], rtol=1e-5)


def test_tensorize_onto_an_extern_intrinsic():
    def intrin(n):
        a = te.placeholder((n,), name="a")
        b = te.placeholder((n,), name="b")
        c = te.compute((n,), lambda i: a[i] + b[i], name="c")

        def body(ins, outs):
            return tir.call_extern("int32", "vadd", outs[0].access_ptr(2), ins[0].access_ptr(1),
                                   ins[1].access_ptr(1), n)

        return te.decl_tensor_intrin(c.op, body, name="vadd")

    A = te.placeholder((64,), name="A")
    B = te.placeholder((64,), name="B")
    C = te.compute((64,), lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=16)
    vadd = intrin(16)
    assert repr(vadd) == "TensorIntrin('vadd')"
    s[C].tensorize(xi, vadd)
    text = str(loom.lower(s, [A, B, C], "f"))
    assert ('T.evaluate(T.call_extern("int32", "vadd", T.address_of(C[i.outer * 16], 2), '
            'T.address_of(A[i.outer * 16], 1), T.address_of(B[i.outer * 16], 1), 16))') in text
    assert "for i.outer in range(4):" in text
    # A mismatching intrinsic is refused when lowering.
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=8)
    s[C].tensorize(xi, vadd)
    with pytest.raises(loom.LoomError, match="tensorize of stage 'C' with intrinsic 'vadd'"):
        loom.lower(s, [A, B, C], "f")


def test_schedule_indexing_and_reprs():
    A, B, C, k = matmul(8, 8, 8)
    s = te.create_schedule([C])
    assert s[C] == s[C.op]
    assert repr(s) == "Schedule(stages=[A, B, C])"
    assert repr(s[C]) == "Stage(C, loops=[i, j, k], root)"
    assert s[C].is_output and s.outputs == [C.op]
    assert s[C].op == C.op and s[C].origin_op == C.op
    assert len(s[C].all_iter_vars) == 3


# ---------------------------------------------------------------- errors

def test_invalid_split_factor():
    A, B, C, k = matmul(8, 8, 8)
    s = te.create_schedule(C.op)
    with pytest.raises(loom.LoomError, match="split of stage 'C': the factor must be positive"):
        s[C].split(C.op.axis[0], factor=0)
    with pytest.raises(loom.LoomError, match="exactly one of factor= and nparts="):
        s[C].split(C.op.axis[0])
    with pytest.raises(loom.LoomError, match="exactly one of factor= and nparts="):
        s[C].split(C.op.axis[0], factor=2, nparts=2)
    s[C].split(C.op.axis[0], factor=4)
    with pytest.raises(loom.LoomError, match="not a leaf axis"):
        s[C].split(C.op.axis[0], factor=2)
    with pytest.raises(loom.LoomError, match="expected an IterVar"):
        s[C].reorder(C.op.axis[1], "k")
    with pytest.raises(loom.LoomError, match="listed twice"):
        s[C].reorder(k, k)


def test_compute_at_non_ancestor():
    A = te.placeholder((8, 8), name="A")
    B = te.compute((8, 8), lambda i, j: A[i, j] + 1.0, name="B")
    k = te.reduce_axis((0, 8), "k")
    C = te.compute((8,), lambda i: te.sum(B[i, k], axis=k), name="C")
    D = te.compute((8,), lambda i: C[i] * 2.0, name="D")
    s = te.create_schedule(D.op)
    with pytest.raises(loom.LoomError, match="'B' does not consume 'C'"):
        s[C].compute_at(s[B], B.op.axis[0])
    with pytest.raises(loom.LoomError, match="is not a loop of 'D'"):
        s[C].compute_at(s[D], B.op.axis[0])
    with pytest.raises(loom.LoomError, match="is an output of the schedule"):
        s[D].compute_at(s[C], C.op.axis[0])


def test_expression_and_compute_errors():
    A = te.placeholder((8,), name="A")
    i = tir.Var("i")
    with pytest.raises(loom.LoomError, match="true division"):
        i / 2
    with pytest.raises(loom.LoomError, match="no Python truth value"):
        if i < 4:
            pass
    with pytest.raises(loom.LoomError, match="takes 2 index arguments but the shape has 1"):
        te.compute((8,), lambda x, y: A[x], name="bad")
    with pytest.raises(loom.LoomError, match="tensor 'A'"):
        A[1, 2]
    with pytest.raises(loom.LoomError, match="expected an expression"):
        te.compute((8,), lambda x: "text", name="bad")
    with pytest.raises(ZeroDivisionError):  # a Python error in the function propagates
        te.compute((8,), lambda x: 1 / 0, name="bad")
    with pytest.raises(loom.LoomError, match="is not a dtype"):
        te.placeholder((8,), "float31")
    with pytest.raises(loom.LoomError, match="expected a te.Operation or a te.Tensor"):
        te.create_schedule([3])
    s = te.create_schedule(A.op)
    with pytest.raises(loom.LoomError):
        s[te.placeholder((2,), name="other")]


def test_lower_arguments_checked():
    A, B, C, k = matmul(8, 8, 8)
    s = te.create_schedule(C.op)
    with pytest.raises(loom.LoomError):
        loom.lower(s, [A, C])  # B missing
    with pytest.raises(loom.LoomError, match="expected te.Tensor items"):
        loom.lower(s, [A, B, "C"])


def test_extern_dtype_items_must_be_names():
    A = te.placeholder((4,), name="A")

    def body(ins, outs):
        return tir.call_extern("int32", "f", outs[0].access_ptr(2), ins[0].access_ptr(1))

    with pytest.raises(loom.LoomError, match=r"dtype \[0\]: expected a dtype name.*got int"):
        te.extern([(4,), (4,)], [A], body, dtype=[1, 2])
    with pytest.raises(loom.LoomError, match="one name per output"):
        te.extern([(4,), (4,)], [A], body, dtype=["float32"])
    B, C = te.extern([(4,), (4,)], [A], body, dtype=["float32", "int8"])
    assert (B.dtype, C.dtype) == ("float32", "int8")


def test_module_level_comm_reducer_is_collected(tmp_path):
    # A reducer at module level holds its lambdas, whose globals hold the reducer: a cycle
    # that only Python's cyclic GC can free (nanobind reports leaked instances otherwise).
    import os
    import subprocess
    import sys
    script = tmp_path / "reducer.py"
    script.write_text(
        "import loom\n"
        "from loom import te, tir\n"
        "argmax = te.comm_reducer(lambda x, y: tir.max(x, y), lambda t: te.min_value(t),\n"
        "                         name='mymax')\n"
        "A = te.placeholder((8, 8), name='A')\n"
        "k = te.reduce_axis((0, 8), 'k')\n"
        "B = te.compute((8,), lambda i: argmax(A[i, k], axis=k), name='B')\n"
        "s = te.create_schedule(B.op)\n"
        "print(loom.lower(s, [A, B]) is not None)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"
    assert "leaked" not in result.stderr, result.stderr

"""loom.tir expressions and operators, and loom.arith's Analyzer."""
import pytest

import loom
from loom import arith, te, tir


def test_vars_constants_and_printing():
    x = tir.Var("x")
    assert isinstance(x, tir.Var) and isinstance(x, tir.PrimExpr)
    assert x.name == "x" and x.dtype == "int32" and x.kind == "Var"
    assert str(x) == "x" and repr(x) == "x"
    c = tir.const(3)
    assert isinstance(c, tir.IntImm) and c.value == 3 and c.dtype == "int32" and int(c) == 3
    assert tir.const(2 ** 40).dtype == "int64"
    f = tir.const(0.5)
    assert isinstance(f, tir.FloatImm) and f.dtype == "float32" and float(f) == 0.5
    assert tir.const(1, "float64").dtype == "float64"
    assert tir.const(True).dtype == "bool"
    assert tir.IntImm("int8", 5).dtype == "int8"
    assert tir.FloatImm("float16", 1.5).value == 1.5
    assert tir.SizeVar("n").name == "n"


def test_operators_with_python_numbers_on_either_side():
    x, y = tir.Var("x"), tir.Var("y")
    assert str(x + 1) == "x + 1"
    assert str(1 + x) == "1 + x"
    assert str(x - 2) == "x - 2" and str(2 - x) == "2 - x"
    assert str(x * 4 + y) == "x * 4 + y"
    assert str(3 * x) == "3 * x"
    assert str(x // 8) == "x // 8" and str(x % 8) == "x % 8"
    assert (x // 8).kind == "FloorDiv" and (x % 8).kind == "FloorMod"
    assert str(-x) == "0 - x"
    assert str(x < 3) == "x < 3" and str(3 < x) == "x > 3"
    assert (x == y).kind == "EQ" and (x != y).kind == "NE"
    assert (x <= y).kind == "LE" and (x >= 1).kind == "GE"
    assert (x & 7).kind == "Call" and ((x < 1) & (y < 2)).kind == "And"
    assert ((x < 1) | (y < 2)).kind == "Or" and (~(x < 1)).kind == "Not"
    # Literals take the expression's type.
    z = tir.Var("z", "int64")
    assert (z + 1).dtype == "int64"
    h = tir.Var("h", "float16")
    assert (h * 0.5).dtype == "float16"
    assert (x * 0.5).dtype == "float32"  # an int meets a float literal as float32
    # Constants fold.
    assert (tir.const(6) * 7).value == 42
    assert (tir.const(7) // 2).value == 3 and (tir.const(-7) // 2).value == -4


def test_true_division():
    x = tir.Var("x", "float32")
    assert (x / 2).kind == "Div" and (x / 2).dtype == "float32"
    assert (1.0 / x).dtype == "float32"
    i = tir.Var("i")
    with pytest.raises(loom.LoomError, match=r"use `//` \(floor division"):
        i / 2
    with pytest.raises(loom.LoomError, match="truncdiv"):
        4 / i
    assert (i / 2.0).dtype == "float32"  # a float operand: true division


def test_bool_raises_but_constants_have_values():
    i = tir.Var("i")
    with pytest.raises(loom.LoomError, match="no Python truth value"):
        bool(i < 4)
    with pytest.raises(loom.LoomError):
        if i == 0:
            pass
    with pytest.raises(loom.LoomError):
        _ = i < 4 and i > 0
    assert bool(tir.const(1) < 2) is True
    assert bool(tir.const(3) == 4) is False
    with pytest.raises(loom.LoomError, match="only an integer constant"):
        int(i)


def test_functions():
    i, j = tir.Var("i"), tir.Var("j")
    f = tir.Var("f", "float32")
    assert tir.floordiv(i, 4).kind == "FloorDiv" and tir.floormod(i, 4).kind == "FloorMod"
    assert tir.truncdiv(i, 4).kind == "Div" and tir.truncmod(i, 4).kind == "Mod"
    assert str(tir.min(i, j)) == "T.min(i, j)" and str(tir.max(i, 0)) == "T.max(i, 0)"
    assert tir.select(i < j, i, j).kind == "Select"
    assert tir.if_then_else(i < 4, f, 0.0).dtype == "float32"
    assert tir.cast("float32", i).dtype == "float32" and i.astype("int64").dtype == "int64"
    for fn in (tir.exp, tir.log, tir.sqrt, tir.tanh, tir.sigmoid, tir.erf, tir.sin, tir.cos,
               tir.floor, tir.ceil, tir.round, tir.trunc, tir.fabs, tir.rsqrt, tir.exp2,
               tir.log2, tir.log10):
        e = fn(f)
        assert e.kind == "Call" and e.dtype == "float32", fn
    assert str(tir.exp(f)) == "T.exp(f)"
    assert tir.isnan(f).dtype == "bool"
    assert tir.pow(f, 2.0).dtype == "float32" and (f ** 2.0).dtype == "float32"
    assert tir.fma(f, f, f).dtype == "float32"
    with pytest.raises(loom.LoomError, match="exp"):
        tir.exp(i)  # integers must be cast first
    assert tir.all(i < 4, j < 4).kind == "And" and tir.any(i < 4, j < 4).kind == "Or"
    assert tir.logical_not(i < 4).kind == "Not"
    assert tir.call_intrin("int32", "bitwise_and", i, 7).kind == "Call"
    assert "my_fn" in str(tir.call_extern("int32", "my_fn", i, 1))
    assert tir.Evaluate(tir.call_extern("int32", "g")).kind == "Evaluate"


def test_structural_equality_and_hash():
    i = tir.Var("i")
    a, b = i * 4 + 1, i * 4 + 1
    assert not a.same_as(b)
    assert tir.structural_equal(a, b)
    assert tir.structural_hash(a) == tir.structural_hash(b)
    assert not tir.structural_equal(a, i * 4 + 2)
    j = tir.Var("j")
    assert not tir.structural_equal(i + 1, j + 1)
    assert tir.structural_equal(i + 1, j + 1, map_free_vars=True)
    assert tir.script(i + 1) == "i + 1"


def test_ranges_itervars_and_tensor_indices():
    r = tir.Range(0, 16)
    assert int(r.min) == 0 and int(r.extent) == 16
    assert int(tir.Range(4).extent) == 4
    assert int(tir.Range(2, 10).extent) == 8
    assert int(tir.Range.from_min_extent(2, 10).extent) == 10
    assert repr(r) == "Range(min=0, extent=16)"
    k = te.reduce_axis((0, 8), "k")
    # An IterVar is usable as an expression, and compares by identity.
    assert str(k * 2 + 1) == "k * 2 + 1"
    assert k == k and k != te.reduce_axis((0, 8), "k")
    assert k in [k] and str(k.var) == "k"
    assert str(tir.PrimExpr(k)) == "k"


def test_analyzer_simplify_bounds_and_proofs():
    i, j = tir.Var("i"), tir.Var("j")
    ana = arith.Analyzer()
    ana.bind(i, tir.Range(0, 16))
    assert ana.simplify(i // 16).value == 0
    assert ana.simplify(i % 16).same_as(i)
    assert str(ana.simplify(i * 4 + i * 2 - i * 6 + j)) == "j"
    assert str(ana.canonical_simplify((i + j) * 2 - j * 2)) == "i * 2"
    assert str(ana.rewrite_simplify(i + 0)) == "i"
    bound = ana.const_int_bound(i * 4 + 3)
    assert (bound.min_value, bound.max_value) == (3, 63)
    assert bound == arith.ConstIntBound(3, 63)
    assert ana.const_int_bound(j).max_value == 2 ** 31 - 1  # int32's range
    assert ana.const_int_bound(tir.Var("w", "int64")).max_value == arith.ConstIntBound.POS_INF
    ms = ana.modular_set(i * 4 + 3)
    assert (ms.coeff, ms.base) == (4, 3)
    assert ana.can_prove(i * 4 + 3 < 64)
    assert not ana.can_prove(i * 4 + 3 < 63)
    assert ana.can_prove_greater_equal(i, 0) and ana.can_prove_less(i, 16)
    assert ana.can_prove_equal(i * 2, i + i)
    s = ana.int_set(i * 2 + j, {i: tir.Range(0, 16), j: tir.Range(0, 4)})
    assert (int(s.min), int(s.max)) == (0, 33) and repr(s) == "IntSet([0, 33])"
    s = ana.int_set(i * 2 + j, {j: tir.Range(0, 4)})  # i: a single point
    assert str(s.max) == "i * 2 + 3"
    assert "ConstIntBound(min_value=3, max_value=63)" == repr(bound)


def test_analyzer_bind_expr_update_and_constraint_scope():
    x, y = tir.Var("x"), tir.Var("y")
    ana = arith.Analyzer()
    ana.bind(y, x * 2)
    assert str(ana.simplify(y - x)) == "x"
    ana.update(x, arith.ConstIntBound(0, 9))
    assert ana.can_prove(x < 10)
    assert not ana.can_prove(x < 5)
    with ana.constraint_scope(x < 5):
        assert ana.can_prove(x < 5)
    assert not ana.can_prove(x < 5)
    z = tir.Var("z")
    ana.update(z, arith.ModularSet(8, 2))
    assert ana.modular_set(z + 2).coeff == 8 and ana.modular_set(z + 2).base == 4


def test_constraint_scopes_must_be_left_innermost_first():
    i = tir.Var("i")
    ana = arith.Analyzer()
    s1, s2 = ana.constraint_scope(i < 10), ana.constraint_scope(i < 20)
    s1.__enter__()
    s2.__enter__()
    with pytest.raises(loom.LoomError, match="innermost first"):
        s1.__exit__(None, None, None)
    assert ana.can_prove(i < 10)  # nothing was left: both facts still hold
    s2.__exit__(None, None, None)
    assert ana.can_prove(i < 10)
    s1.__exit__(None, None, None)
    assert not ana.can_prove(i < 10) and not ana.can_prove(i < 20)
    with pytest.raises(loom.LoomError, match="not entered"):
        s1.__exit__(None, None, None)
    with ana.constraint_scope(i < 5):  # the analyzer is usable as before
        with ana.constraint_scope(i >= 0):
            assert ana.can_prove(i < 5) and ana.can_prove(i >= 0)
    assert not ana.can_prove(i < 5)


def test_rebinding_a_variable_needs_allow_override():
    i, j = tir.Var("i"), tir.Var("j")
    ana = arith.Analyzer()
    ana.bind(i, tir.Range(0, 16))
    ana.bind(i, tir.Range(0, 16))  # the same binding again is fine
    with pytest.raises(loom.LoomError, match="'i' is already bound.*allow_override"):
        ana.bind(i, tir.Range(0, 8))
    assert ana.can_prove(i < 16) and not ana.can_prove(i < 8)
    ana.bind(i, tir.Range(0, 8), allow_override=True)
    assert ana.can_prove(i < 8)
    ana.bind(j, i * 2)
    with pytest.raises(loom.LoomError, match="'j' is already bound.*allow_override"):
        ana.bind(j, i * 3)
    ana.update(j, arith.ConstIntBound(0, 3), allow_override=True)
    with pytest.raises(loom.LoomError, match="allow_override"):
        ana.update(j, arith.ConstIntBound(0, 5))
    k = tir.Var("k")
    ana.update(k, arith.ModularSet(4, 1))
    with pytest.raises(loom.LoomError, match="allow_override"):
        ana.update(k, arith.ModularSet(4, 2))
    with pytest.raises(loom.LoomError, match="allow_override"):
        ana.bind(k, j + 1)
    n = tir.Var("n")
    with ana.constraint_scope(n < 4):  # a fact the analyzer holds on n
        with pytest.raises(loom.LoomError, match="allow_override"):
            ana.bind(n, tir.Range(0, 100))


def test_simplify_steps_are_checked():
    i = tir.Var("i")
    ana = arith.Analyzer()
    assert str(ana.simplify(i * 2 - i, 1)) == "i"
    for steps in (0, -1, 65, 2**31 - 1):
        with pytest.raises(loom.LoomError, match="steps must be between 1 and 64"):
            ana.simplify(i + 1, steps)


def test_numpy_scalars_are_numbers():
    np = pytest.importorskip("numpy")
    x = tir.Var("x")
    assert str(x + np.int64(3)) == "x + 3"
    assert str(tir.const(np.int32(7))) == "7"
    assert tir.const(np.int64(7), "int64").dtype == "int64"
    assert str(tir.const(np.float32(0.5))) == "T.float32(0.5)"
    assert (x.astype("float32") * np.float32(2.0)).dtype == "float32"
    assert tir.const(np.bool_(True)).dtype == "bool"
    A = te.placeholder((np.int64(4), np.uint8(3)), name="A")
    assert [int(d) for d in A.shape] == [4, 3]
    assert [int(d) for d in te.placeholder(np.array([2, 5]), name="B").shape] == [2, 5]
    B = te.compute((np.int32(4),), lambda i: A[i, np.int64(0)] * np.float64(2.0), name="B")
    assert B.dtype == "float32"
    with pytest.raises(loom.LoomError, match="expected an expression"):
        te.placeholder((np.complex64(1),))


def test_out_of_range_and_wrong_typed_constants_are_user_errors():
    with pytest.raises(loom.LoomError, match="does not fit in int64"):
        tir.const(1 << 70, "int64")
    with pytest.raises(loom.LoomError, match="does not fit in int64"):
        tir.const(1 << 70)
    with pytest.raises(loom.LoomError, match="does not fit in int8"):
        tir.const(300, "int8")
    with pytest.raises(loom.LoomError, match="does not fit in int32"):
        tir.const(float("inf"), "int32")
    with pytest.raises(loom.LoomError, match="float64"):
        tir.const(1 << 2000, "float32")
    assert float(tir.const(1 << 70, "float64")) == float(1 << 70)
    assert int(tir.const(2.7, "int32")) == 2
    with pytest.raises(loom.LoomError, match="expected a Python"):
        tir.const("1", "int32")

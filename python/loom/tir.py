"""Loom's IR from Python: expressions, their operators and math functions, and what lowering
produces (``PrimFunc``), with the TIR interpreter.

Expressions are built with Python operators::

    from loom import tir
    i = tir.Var("i")                 # int32
    e = (i * 4 + 3) // 8             # floor division, as Python's //
    e % 8, i < 16, -i, i & 7         # floormod, comparisons, bitwise on integers
    tir.truncdiv(i, 8)               # C division (rounds toward 0)
    tir.exp(tir.Var("x", "float32")) # math intrinsics take float expressions

A Python int or float next to an expression takes the expression's type (``x + 1`` with an
int64 ``x`` is an int64 sum). ``/`` is true division and only defined when an operand is a
float (``LoomError`` otherwise: use ``//`` or ``tir.truncdiv``). An expression has no Python
truth value (``if i < 4:`` raises ``LoomError``): put conditions into the IR with
``tir.if_then_else`` / ``tir.select``, or decide them with ``loom.arith.Analyzer().can_prove``.
``str(expr)`` is Loom's text of it; ``tir.structural_equal`` compares structure.
"""
from ._loom import tir as _tir

PrimExpr = _tir.PrimExpr
Var = _tir.Var
SizeVar = _tir.SizeVar
IntImm = _tir.IntImm
FloatImm = _tir.FloatImm
Range = _tir.Range
IterVar = _tir.IterVar
Stmt = _tir.Stmt
Buffer = _tir.Buffer
PrimFunc = _tir.PrimFunc

const = _tir.const
floordiv = _tir.floordiv
floormod = _tir.floormod
truncdiv = _tir.truncdiv
truncmod = _tir.truncmod
div = _tir.div
min = _tir.min  # noqa: A001 (TVM's name)
max = _tir.max  # noqa: A001
pow = _tir.pow  # noqa: A001
logical_and = _tir.logical_and
logical_or = _tir.logical_or
logical_not = _tir.logical_not
all = _tir.all  # noqa: A001
any = _tir.any  # noqa: A001
select = _tir.select
if_then_else = _tir.if_then_else
cast = _tir.cast
exp = _tir.exp
exp2 = _tir.exp2
log = _tir.log
log2 = _tir.log2
log10 = _tir.log10
sqrt = _tir.sqrt
rsqrt = _tir.rsqrt
tanh = _tir.tanh
sigmoid = _tir.sigmoid
erf = _tir.erf
sin = _tir.sin
cos = _tir.cos
fabs = _tir.fabs
abs = _tir.fabs  # noqa: A001 (float operands, as tir's fabs)
floor = _tir.floor
ceil = _tir.ceil
round = _tir.round  # noqa: A001
trunc = _tir.trunc
isnan = _tir.isnan
fma = _tir.fma
call_intrin = _tir.call_intrin
call_extern = _tir.call_extern
Evaluate = _tir.Evaluate
SeqStmt = _tir.SeqStmt
structural_equal = _tir.structural_equal
structural_hash = _tir.structural_hash
script = _tir.script


def interpret(func: PrimFunc, *args: object) -> None:
    """Runs ``func`` (a ``PrimFunc``, e.g. ``loom.lower``'s result) with the TIR interpreter.

    One tensor (NumPy array, PyTorch tensor, ``loom.nd.NDArray``) per buffer parameter and a
    number per scalar parameter, in parameter order. Every loop runs serially with the exact
    semantics compiled code has, so it shows that a schedule is correct, not that it is fast.
    Results are written back into the arrays given; out-of-bounds accesses and other undefined
    behaviour raise ``LoomError``.
    """
    _tir.interpret(func, *args)


__all__ = [
    "PrimExpr", "Var", "SizeVar", "IntImm", "FloatImm", "Range", "IterVar", "Stmt", "Buffer",
    "PrimFunc", "const", "floordiv", "floormod", "truncdiv", "truncmod", "div", "min", "max",
    "pow", "logical_and", "logical_or", "logical_not", "all", "any", "select", "if_then_else",
    "cast", "exp", "exp2", "log", "log2", "log10", "sqrt", "rsqrt", "tanh", "sigmoid", "erf",
    "sin", "cos", "fabs", "abs", "floor", "ceil", "round", "trunc", "isnan", "fma",
    "call_intrin", "call_extern", "Evaluate", "SeqStmt", "structural_equal", "structural_hash",
    "script", "interpret",
]

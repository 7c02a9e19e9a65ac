"""Tensor expressions and schedules, as TVM users write them::

    from loom import te
    n = 1024
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")

    s = te.create_schedule(C.op)
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 32, 32)
    ko, ki = s[C].split(k, factor=4)
    s[C].reorder(xo, yo, ko, xi, ki, yi)
    s[C].vectorize(yi)
    s[C].parallel(xo)
    print(loom.lower(s, [A, B, C], name="gemm"))

The stage primitives (``s[C].split``, ``tile``, ``fuse``, ``reorder``, ``compute_at``,
``compute_inline``, ``compute_root``, ``vectorize``, ``unroll``, ``parallel``, ``pragma``,
``bind``, ``set_scope``, ``storage_align``, ``double_buffer``, ``tensorize``) and the schedule's
(``s.cache_read``, ``s.cache_write``, ``s.rfactor``) take TVM's arguments in TVM's order. An
invalid request raises ``loom.LoomError`` naming the stage, the primitive and the reason.
"""
from collections.abc import Sequence

from ._loom import build as _build
from ._loom import te as _te
from . import tir as _tir

Tensor = _te.Tensor
Operation = _te.Operation
Stage = _te.Stage
Schedule = _te.Schedule
CommReducer = _te.CommReducer
TensorIntrin = _te.TensorIntrin

placeholder = _te.placeholder
compute = _te.compute
reduce_axis = _te.reduce_axis
thread_axis = _te.thread_axis
sum = _te.sum  # noqa: A001 (TVM's name)
prod = _te.prod
max = _te.max  # noqa: A001
min = _te.min  # noqa: A001
comm_reducer = _te.comm_reducer
min_value = _te.min_value
max_value = _te.max_value
extern = _te.extern
create_schedule = _te.create_schedule
decl_tensor_intrin = _te.decl_tensor_intrin

# Expression helpers TVM's te re-exports from tir.
var = _tir.Var
size_var = _tir.SizeVar
const = _tir.const
if_then_else = _tir.if_then_else
exp = _tir.exp
log = _tir.log
sqrt = _tir.sqrt
tanh = _tir.tanh
sigmoid = _tir.sigmoid
floordiv = _tir.floordiv
floormod = _tir.floormod


def schedule_to_primfunc(schedule: Schedule, args: Sequence[Tensor],
                         name: str = "main") -> _tir.PrimFunc:
    """The schedule's loop nest before the TIR pipeline (``PrimFunc``).

    Bound inference, loop nests built from each stage's schedule, stages attached at their
    ``compute_at`` points, simplification; tensors are still accessed N-dimensionally. This is
    what a test of a schedule's loop structure compares (``loom.lower`` then flattens buffers,
    partitions loops, vectorizes, ...). ``args``: every input placeholder and the outputs, in
    parameter order.
    """
    return _build.schedule_to_primfunc(schedule, list(args), name)


__all__ = [
    "Tensor", "Operation", "Stage", "Schedule", "CommReducer", "TensorIntrin", "placeholder",
    "compute", "reduce_axis", "thread_axis", "sum", "prod", "max", "min", "comm_reducer",
    "min_value", "max_value", "extern", "create_schedule", "decl_tensor_intrin", "var",
    "size_var", "const", "if_then_else", "exp", "log", "sqrt", "tanh", "sigmoid", "floordiv",
    "floormod", "schedule_to_primfunc",
]

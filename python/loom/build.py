"""``loom.lower`` and ``loom.build``: from a schedule to loop IR, and to machine code::

    f = loom.lower(s, [A, B, C], name="matmul")     # a PrimFunc; print(f) shows its text
    mod = loom.build(s, [A, B, C], target="llvm", name="matmul")
    mod.matmul(a, b, c)                              # or mod["matmul"](...), or mod(...)

The compiled function takes one tensor per tensor argument: ``loom.nd.NDArray``, NumPy arrays,
PyTorch tensors (anything with ``__dlpack__``), passed without copying, so outputs are written
into the arrays given. Count, dtype, shape and contiguity are checked first (``LoomError``).
Lowering, compiling and running release the GIL.
"""
from collections.abc import Sequence
from typing import Optional, Union

from ._loom import build as _build
from ._loom import te as _te
from ._loom import tir as _tir

Module = _build.Module
Function = _build.Function


def lower(schedule: _te.Schedule, args: Sequence[_te.Tensor],
          name: str = "main") -> _tir.PrimFunc:
    """The function computing ``schedule``'s outputs, through the TIR lowering pipeline.

    ``args`` lists every placeholder the outputs read and the outputs, in parameter order.
    Returns a ``loom.tir.PrimFunc`` whose ``str()`` (or ``.script()``) is its TVMScript-like
    text: flat buffers and vector code, what ``build`` compiles. For the loop nest before the
    pipeline (N-dimensional accesses), use ``loom.te.schedule_to_primfunc``.
    """
    return _build.lower(schedule, list(args), name)


def build(inputs: Union[_te.Schedule, _tir.PrimFunc, Sequence[_tir.PrimFunc]],
          args: Optional[Sequence[_te.Tensor]] = None, target: str = "llvm",
          name: Optional[str] = None) -> _build.Module:
    """Compiles for ``target`` and returns a ``loom.build.Module``.

    ``inputs`` is a schedule (then ``args`` lists its tensors as for ``lower`` and ``name``
    names the function, "main" by default), a ``PrimFunc`` from ``lower`` (built under its
    own name), or a list of them (one module, one function per name). ``target`` is a target
    string: "llvm" (this CPU), "llvm -mcpu=skylake-avx512", "c", ...
    """
    if isinstance(inputs, _te.Schedule):
        if args is None:
            raise _build_error("loom.build(schedule, args): give args, the tensors of the "
                               "function (inputs then outputs) in parameter order")
        funcs = [_build.lower(inputs, list(args), name or "main")]
    elif isinstance(inputs, _tir.PrimFunc):
        funcs = [inputs]
    elif isinstance(inputs, (list, tuple)) and all(isinstance(f, _tir.PrimFunc) for f in inputs):
        funcs = list(inputs)
    else:
        raise _build_error("loom.build: expected a te.Schedule, a tir.PrimFunc or a list of "
                           "PrimFuncs, got " + type(inputs).__name__)
    if name is not None and not isinstance(inputs, _te.Schedule):
        if len(funcs) != 1 or funcs[0].name != name:
            raise _build_error(
                f"loom.build: name={name!r} does not match the function's name "
                f"{[f.name for f in funcs]}; a PrimFunc keeps the name lower gave it")
    return _build.build(funcs, target)


def _build_error(message: str) -> Exception:
    from ._loom import LoomError
    return LoomError(message)


__all__ = ["lower", "build", "Module", "Function"]

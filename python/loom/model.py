"""Compiling ONNX models, loading compiled ones, and running them.

::

    model = loom.compile("resnet18.onnx", input_shapes={"input": (1, 3, 224, 224)})
    outputs = model(image)                    # {"logits": np.ndarray}
    model.export("resnet18.so")               # one file: kernels, graph and weights
    model = loom.load("resnet18.so")
    print(model.benchmark(repeat=50, threads=1))
"""
from __future__ import annotations

import dataclasses
import os
import statistics
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import nd
from ._loom import LoomError
from ._loom import runtime as _runtime


class TensorSpec(NamedTuple):
    """A model input or output: its name, dtype and shape (``None`` for a size known only
    when the model runs; ``dtype`` and ``shape`` are ``None`` for the outputs of a model run
    by the virtual machine, whose types its run decides)."""

    name: str
    dtype: Optional[str]
    shape: Optional[Tuple[Optional[int], ...]]


@dataclasses.dataclass(frozen=True)
class BenchmarkResult:
    """The wall times of ``repeat`` runs of a model, in milliseconds."""

    times_ms: Tuple[float, ...]
    threads: int

    @property
    def repeat(self) -> int:
        return len(self.times_ms)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms)

    @property
    def mean_ms(self) -> float:
        return statistics.fmean(self.times_ms)

    @property
    def min_ms(self) -> float:
        return min(self.times_ms)

    @property
    def max_ms(self) -> float:
        return max(self.times_ms)

    @property
    def std_ms(self) -> float:
        return statistics.pstdev(self.times_ms)

    def __str__(self) -> str:
        return (f"median_ms={self.median_ms:.4f} min_ms={self.min_ms:.4f} "
                f"max_ms={self.max_ms:.4f} mean_ms={self.mean_ms:.4f} std_ms={self.std_ms:.4f} "
                f"repeat={self.repeat} threads={self.threads}")


def _spec(entry: Tuple[str, Optional[str], Optional[Sequence[Optional[int]]]]) -> TensorSpec:
    name, dtype, shape = entry
    return TensorSpec(name, dtype, None if shape is None else tuple(shape))


class Model:
    """A compiled model (``loom.compile``) or a loaded artifact (``loom.load``).

    Each call runs on an executor of its own (they share the kernels and weights), so several
    Python threads may run one model at once; runs release the GIL.
    """

    def __init__(self, impl: Any) -> None:
        self._impl = impl
        self._inputs = [_spec(entry) for entry in impl.inputs]
        self._outputs = [_spec(entry) for entry in impl.outputs]
        self._dtypes = {spec.name: spec.dtype for spec in self._inputs}
        #: The threads each run's kernels use: 0 for all of the runtime's pool.
        self.num_threads = 0

    @property
    def inputs(self) -> List[TensorSpec]:
        """Name, dtype and shape of each input, in the model's order."""
        return list(self._inputs)

    @property
    def outputs(self) -> List[TensorSpec]:
        """Name, dtype and shape of each output, in the model's order."""
        return list(self._outputs)

    @property
    def executor(self) -> str:
        """What runs the model: ``"graph"`` (every shape fixed, one static memory plan) or
        ``"vm"`` (the virtual machine: shapes computed when it runs)."""
        return self._impl.executor

    def run(self, *args: Any, **inputs: Any) -> Dict[str, np.ndarray]:
        """Runs the model; inputs by name, or positionally in the model's order. Each is a
        NumPy array, a torch tensor, a ``loom.nd.NDArray`` (any DLPack tensor: read without a
        copy) or anything ``numpy.asarray`` takes. Returns the outputs by name, as NumPy
        arrays of their own."""
        return {name: np.from_dlpack(value) for name, value in
                self.run_dlpack(*args, **inputs).items()}

    __call__ = run

    def run_dlpack(self, *args: Any, **inputs: Any) -> Dict[str, nd.NDArray]:
        """``run``, returning the outputs as ``loom.nd.NDArray`` (DLPack tensors: hand them to
        ``torch.from_dlpack`` or ``np.from_dlpack`` without a copy)."""
        values = self._impl.run(self._named(args, inputs), self.num_threads)
        return {spec.name: value for spec, value in zip(self._outputs, values)}

    def benchmark(self, repeat: int = 20, warmup: int = 3, threads: Optional[int] = None,
                  inputs: Optional[Mapping[str, Any]] = None, seed: int = 0) -> BenchmarkResult:
        """Times ``repeat`` runs after ``warmup`` ones, on ``threads`` threads (default: the
        model's ``num_threads``). Inputs not given get seeded random values (floats in
        [-1, 1), integers and bools 0 or 1); an input with a size known only at run time must
        be given."""
        given = dict(inputs or {})
        rng = np.random.default_rng(seed)
        for spec in self._inputs:
            if spec.name in given:
                continue
            if spec.shape is None or any(d is None for d in spec.shape):
                raise LoomError(f"benchmark: input '{spec.name}' has the symbolic shape "
                                f"{spec.shape}; pass a value for it in inputs= to choose the "
                                "size to time")
            given[spec.name] = _random(spec, rng)
        threads = self.num_threads if threads is None else threads
        seconds = self._impl.time(self._named((), given), warmup, repeat, threads)
        return BenchmarkResult(tuple(s * 1e3 for s in seconds), threads)

    def export(self, path: Union[str, os.PathLike]) -> None:
        """Writes the model as one artifact (a shared library holding the kernels, the
        execution graph and the weights) that ``loom.load``, ``loom run`` and the C API load."""
        self._impl.export(os.fspath(path))

    def __repr__(self) -> str:
        inputs = ", ".join(f"{s.name}: {s.dtype}{list(s.shape or ())}" for s in self._inputs)
        return f"loom.Model(executor={self.executor!r}, inputs=[{inputs}])"

    def _named(self, args: Sequence[Any], inputs: Mapping[str, Any]) -> List[Tuple[str, Any]]:
        if len(args) > len(self._inputs):
            raise LoomError(f"the model takes {len(self._inputs)} input(s) "
                            f"({', '.join(s.name for s in self._inputs)}), got {len(args)} "
                            "positional values")
        named = [(spec.name, value) for spec, value in zip(self._inputs, args)]
        for spec, _ in named:
            if spec in inputs:
                raise LoomError(f"input '{spec}' is given both positionally and by name")
        named += list(inputs.items())
        return [(name, _tensor(value, self._dtypes.get(name))) for name, value in named]


def _tensor(value: Any, dtype: Optional[str]) -> Any:
    """A value as a DLPack tensor the runtime can read: tensors pass as they are (NumPy
    arrays and torch tensors laid out otherwise than row-major are made so, which copies);
    other values become NumPy arrays of the input's dtype."""
    if isinstance(value, np.ndarray):
        return np.ascontiguousarray(value)
    if callable(getattr(value, "is_contiguous", None)) and not value.is_contiguous():
        return value.contiguous()  # a torch tensor's view (transposed, sliced)
    if isinstance(value, nd.NDArray) or hasattr(value, "__dlpack__"):
        return value
    return np.ascontiguousarray(np.asarray(value, dtype=dtype))


def _random(spec: TensorSpec, rng: np.random.Generator) -> np.ndarray:
    shape = tuple(spec.shape or ())
    dtype = np.dtype(spec.dtype)
    if dtype.kind == "f":
        return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
    return rng.integers(0, 2, size=shape).astype(dtype)


def compile(model: Any, target: str = "llvm", opt_level: int = 3,
            input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
            records: Optional[Union[str, os.PathLike]] = None, precision: Optional[str] = None,
            executor: str = "auto", shipped_records: bool = True) -> Model:
    """Compiles an ONNX model: a path, the serialized bytes, or an ``onnx.ModelProto``.

    target: ``"llvm"`` (this CPU), ``"llvm -mcpu=NAME"``, a tag (``"x86-64-avx512"``), ...
    opt_level: 0 (one kernel per operator) to 3 (fusion, folding, blocked layouts).
    input_shapes: ``{"input": (1, 3, 224, 224)}`` binds symbolic dimensions; those left
    unbound stay symbolic and the virtual machine runs the model.
    records: tuning records (``loom tune``); the shipped records serve the kernels they lack
    unless ``shipped_records=False``.
    precision: ``"float32"`` (default), ``"bf16"`` or ``"fp16"`` products.
    executor: ``"auto"``, ``"graph"`` or ``"vm"``.
    """
    shapes = {name: [int(d) for d in shape] for name, shape in (input_shapes or {}).items()}
    options = dict(target=target, opt_level=opt_level, input_shapes=shapes,
                   records=os.fspath(records) if records is not None else "",
                   shipped_records=shipped_records, precision=precision or "float32",
                   executor=executor)
    if isinstance(model, (str, os.PathLike)):
        return Model(_runtime.compile(os.fspath(model), **options))
    if isinstance(model, (bytes, bytearray, memoryview)):
        return Model(_runtime.compile(bytes(model), **options))
    if hasattr(model, "SerializeToString"):  # an onnx.ModelProto
        return Model(_runtime.compile(model.SerializeToString(), **options))
    raise LoomError("loom.compile: expected an ONNX model as a path, bytes or an "
                    f"onnx.ModelProto, got {type(model).__name__}")


def load(path: Union[str, os.PathLike]) -> Model:
    """Loads an artifact written by ``Model.export`` or ``loom compile``."""
    return Model(_runtime.load(os.fspath(path)))


__all__ = ["BenchmarkResult", "Model", "TensorSpec", "compile", "load"]

"""Loom: an optimizing compiler for deep learning models.

Models (ONNX in, one artifact out)::

    import loom
    model = loom.compile("model.onnx")       # or bytes, or an onnx.ModelProto
    outputs = model(x)                       # {"output": np.ndarray}

Tensors shared with NumPy and PyTorch through DLPack: ``loom.nd``. Tensor expressions and
schedules, as TVM users write them: ``loom.te``, ``loom.tir``, ``loom.arith``,
``loom.lower`` and ``loom.build``. Per-layer comparison with ONNX Runtime: ``loom.debug``.

User errors raise ``loom.LoomError`` (a ``ValueError``), with the message naming the node or
call, what was expected and what to do; a bug in Loom raises ``loom.InternalError``.
"""
from ._loom import InternalError, LoomError, __version__
from . import arith, debug, nd, te, tir
from .build import build, lower
from .model import BenchmarkResult, Model, TensorSpec, compile, load

__all__ = ["BenchmarkResult", "InternalError", "LoomError", "Model", "TensorSpec", "__version__",
           "arith", "build", "compile", "debug", "load", "lower", "nd", "te", "tir"]

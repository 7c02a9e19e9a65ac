"""Tensors in Loom's memory, exchanged with NumPy, PyTorch and any DLPack framework.

``from_dlpack`` and ``__dlpack__`` share memory, never copy::

    a = loom.nd.from_dlpack(np_array)        # a Loom array over NumPy's memory
    t = torch.from_dlpack(a)                 # a torch tensor over the same memory
    n = np.from_dlpack(a)                    # and a NumPy view of it

``array`` makes a Loom-owned copy (64-byte aligned), as ``tvm.nd.array`` does.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np

from ._loom import nd as _nd

NDArray = _nd.NDArray


def empty(shape: Union[int, Sequence[int]], dtype: str = "float32") -> NDArray:
    """A new host array of ``shape`` and ``dtype`` (contents unset)."""
    return _nd.empty(shape, dtype)


def from_dlpack(tensor: Any) -> NDArray:
    """A Loom array over ``tensor``'s memory: anything with ``__dlpack__`` (a NumPy array, a
    torch tensor, another Loom array) or a DLPack capsule. No copy is made."""
    return _nd.from_dlpack(tensor)


def array(data: Any, dtype: Optional[str] = None) -> NDArray:
    """A new Loom array holding a copy of ``data`` (anything ``numpy.asarray`` takes), in
    ``dtype`` when given."""
    source = np.ascontiguousarray(np.asarray(data, dtype=dtype))
    result = _nd.empty(source.shape, str(source.dtype))
    result.copyfrom(source)
    return result


__all__ = ["NDArray", "array", "empty", "from_dlpack"]

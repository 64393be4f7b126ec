"""TensorRT data types as NumPy dtypes, and the bytes a tensor of each type occupies.

TensorRT's own ``trt.nptype`` knows only the types NumPy has; it raises ``TypeError`` for
BF16, FP8, E8M0, INT4 and FP4. ``numpy_dtype`` also maps BF16, FP8 and E8M0 to their
``ml_dtypes`` types. INT4 and FP4 are packed two elements per byte, which no NumPy dtype
describes: ``tensor_nbytes`` gives the bytes to allocate for them (and for every other type).
Nothing here imports TensorRT: a data type is given as a TensorRT ``DataType`` or its name.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

# Bits one element occupies in a TensorRT buffer, by DataType name.
_BITS = {
    "FLOAT": 32,
    "HALF": 16,
    "BF16": 16,
    "INT8": 8,
    "INT32": 32,
    "INT64": 64,
    "BOOL": 8,
    "UINT8": 8,
    "FP8": 8,
    "E8M0": 8,
    "INT4": 4,
    "FP4": 4,
}
_NUMPY = {
    "FLOAT": "float32",
    "HALF": "float16",
    "INT8": "int8",
    "INT32": "int32",
    "INT64": "int64",
    "BOOL": "bool",
    "UINT8": "uint8",
}
# TensorRT FP8 is E4M3 with exponent bias 7 and no infinities; E8M0 is an unsigned exponent.
_ML_DTYPES = {"BF16": "bfloat16", "FP8": "float8_e4m3fn", "E8M0": "float8_e8m0fnu"}
_PACKED = ("INT4", "FP4")


def _name(dtype: Any) -> str:
    name = dtype if isinstance(dtype, str) else getattr(dtype, "name", None)
    if not isinstance(name, str) or name not in _BITS:
        known = ", ".join(_BITS)
        raise ValueError(f"dtype must be a TensorRT DataType or one of {known}; got {dtype!r}")
    return name


def numpy_dtype(dtype: Any) -> np.dtype[Any]:
    """The NumPy dtype whose elements have the layout of TensorRT ``dtype`` (a ``DataType``).

    BF16, FP8 and E8M0 come from the ``ml_dtypes`` package (``pip install ml_dtypes``).
    INT4 and FP4 raise ValueError: they are packed two per byte; size their buffers with
    ``tensor_nbytes`` and use bytes (``uint8``) for them.
    """
    name = _name(dtype)
    if name in _PACKED:
        raise ValueError(
            f"{name} packs two elements into each byte and has no NumPy dtype; allocate "
            "tensor_nbytes(dtype, shape) bytes (for example as uint8) instead"
        )
    if name in _NUMPY:
        return np.dtype(_NUMPY[name])
    try:
        ml_dtypes = importlib.import_module("ml_dtypes")
    except ImportError as error:
        raise ImportError(
            f"{name} needs the ml_dtypes package for a NumPy dtype: pip install ml_dtypes"
        ) from error
    found: np.dtype[Any] = np.dtype(getattr(ml_dtypes, _ML_DTYPES[name]))
    return found


def tensor_nbytes(dtype: Any, shape: Sequence[int]) -> int:
    """Bytes a LINEAR tensor of TensorRT ``dtype`` and concrete ``shape`` occupies.

    Packed 4-bit types (INT4, FP4) take half a byte per element, rounded up to whole bytes.
    """
    name = _name(dtype)
    dims = tuple(shape)
    bad = [d for d in dims if type(d) is not int or d < 0]
    if bad:
        raise ValueError(f"shape must hold nonnegative ints; {shape!r} holds {bad!r}")
    return (math.prod(dims) * _BITS[name] + 7) // 8

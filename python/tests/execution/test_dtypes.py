"""numpy_dtype and tensor_nbytes over every data type of the installed TensorRT module."""

from __future__ import annotations

import numpy as np
import pytest
from backend_requirement import rtx_module

from tensoracle import numpy_dtype, tensor_nbytes


@pytest.fixture
def trt():
    return rtx_module()


def test_every_unpacked_type_maps_to_a_dtype_of_its_item_size(trt):
    checked = []
    for dtype in trt.DataType.__members__.values():
        if dtype.name in ("INT4", "FP4"):
            continue
        mapped = numpy_dtype(dtype)
        if dtype.itemsize is not None:  # RTX 1.7 reports no item size for E8M0
            assert mapped.itemsize == dtype.itemsize, dtype.name
        checked.append(dtype.name)
    assert {"FLOAT", "HALF", "BF16", "FP8", "E8M0", "INT64", "BOOL"} <= set(checked)


def test_types_trt_nptype_refuses_get_ml_dtypes(trt):
    import ml_dtypes  # tensoracle[precision]: make test installs it

    for dtype in (trt.bfloat16, trt.fp8, trt.DataType.E8M0):
        with pytest.raises(TypeError):
            trt.nptype(dtype)  # the TensorRT helper the spec's examples use
    assert numpy_dtype(trt.bfloat16) == np.dtype(ml_dtypes.bfloat16)
    assert numpy_dtype(trt.fp8) == np.dtype(ml_dtypes.float8_e4m3fn)
    assert float(np.array(448.0, dtype=numpy_dtype(trt.fp8))) == 448.0  # E4M3 maximum
    assert numpy_dtype(trt.DataType.E8M0) == np.dtype(ml_dtypes.float8_e8m0fnu)


def test_common_types_are_plain_numpy(trt):
    assert numpy_dtype(trt.float32) == np.float32
    assert numpy_dtype(trt.float16) == np.float16
    assert numpy_dtype(trt.int64) == np.int64
    assert numpy_dtype(trt.bool) == np.bool_
    assert numpy_dtype("UINT8") == np.uint8


@pytest.mark.parametrize("name", ["INT4", "FP4"])
def test_packed_types_have_no_dtype_but_a_byte_size(trt, name):
    dtype = getattr(trt.DataType, name)
    assert dtype.itemsize == 0.5  # TensorRT's own statement: half a byte per element
    with pytest.raises(ValueError, match=f"^{name} packs two elements into each byte"):
        numpy_dtype(dtype)
    assert tensor_nbytes(dtype, (4, 6)) == 12
    assert tensor_nbytes(dtype, (3,)) == 2  # rounded up to whole bytes
    assert tensor_nbytes(dtype, (0, 5)) == 0


def test_byte_sizes_are_volume_times_item_size(trt):
    assert tensor_nbytes(trt.float32, (1, 4, 2)) == 32
    assert tensor_nbytes(trt.bfloat16, (3, 3)) == 18
    assert tensor_nbytes(trt.int64, ()) == 8  # a scalar holds one element


def test_bad_arguments_name_the_value():
    with pytest.raises(ValueError, match=r"dtype must be a TensorRT DataType or one of FLOAT, "):
        numpy_dtype("float32")
    with pytest.raises(ValueError, match=r"shape must hold nonnegative ints; \(2, -1\) holds"):
        tensor_nbytes("FLOAT", (2, -1))

"""GPU compatibility properties from the CUDA driver: the no-driver path here, real values there."""

from __future__ import annotations

import ctypes

import pytest

from tensoracle import gpu

KEYS = {
    "name",
    "compute_capability",
    "memory_bus_width_bits",
    "l2_cache_bytes",
    "shared_memory_per_block_bytes",
    "shared_memory_per_block_optin_bytes",
    "shared_memory_per_multiprocessor_bytes",
    "texture_alignment_bytes",
    "multiprocessor_count",
    "integrated",
    "ecc_enabled",
    "total_memory_bytes",
}


def _driver_present() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def test_without_a_driver_there_are_no_properties_and_the_reason_names_libcuda():
    if _driver_present():
        pytest.skip("libcuda.so.1 is present on this machine")
    assert gpu.properties() is None
    reason = gpu.absent_reason()
    assert reason is not None
    assert "libcuda.so.1" in reason


@pytest.mark.gpu
def test_with_a_gpu_every_property_is_reported_without_floats():
    properties = gpu.properties()
    assert properties is not None
    assert gpu.absent_reason() is None
    assert set(properties) == KEYS
    assert properties["multiprocessor_count"] > 0
    assert properties["total_memory_bytes"] > 0
    major, minor = properties["compute_capability"].split(".")
    assert int(major) >= 7
    assert int(minor) >= 0
    assert not any(isinstance(value, float) for value in properties.values())

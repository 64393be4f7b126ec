"""GPU compatibility properties from the CUDA driver: the no-driver path here, real values there."""

from __future__ import annotations

import ctypes
import sys

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
        ctypes.CDLL(gpu.driver_library())
    except OSError:
        return False
    return True


@pytest.mark.parametrize(
    ("platform", "library"),
    [("win32", "nvcuda.dll"), ("linux", "libcuda.so.1"), ("cygwin", "libcuda.so.1")],
)
def test_the_driver_library_is_named_for_the_platform_given(platform, library):
    assert gpu.driver_library(platform) == library


@pytest.mark.parametrize(
    ("platform", "library"), [("win32", "nvcuda.dll"), ("linux", "libcuda.so.1")]
)
def test_without_a_platform_the_driver_library_is_this_interpreters(monkeypatch, platform, library):
    monkeypatch.setattr(sys, "platform", platform)
    assert gpu.driver_library() == library


def test_without_a_driver_there_are_no_properties_and_the_reason_names_the_driver_library():
    if _driver_present():
        pytest.skip(f"{gpu.driver_library()} is present on this machine")
    assert gpu.properties() is None
    reason = gpu.absent_reason()
    assert reason is not None
    # The core loads the driver by the name the Python side uses.
    assert gpu.driver_library() in reason


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

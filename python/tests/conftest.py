"""Test configuration: GPU tests skip, with their reason, on machines without an NVIDIA GPU, and
tests that build or run engines fail where neither TensorRT nor TensorRT-RTX imports: ``make test``
installs TensorRT-RTX, so its absence is a broken install. A run meant to go without a backend
says so with ``pytest --without-backend``; there those tests skip with the reason
(support/backend_requirement.py).

The check asks the driver only when a `gpu` test is about to run, never at collection.

The tests are in folders named after the package's parts (engine/, cache/, execution/, compare/,
cubin/, cli/, convert/, tools/); the helpers they share are in support/, which this file puts on
``sys.path`` so that tests import them as top-level modules (``from engine_helpers import ...``).

Skips are for a missing GPU, or a missing TensorRT backend under ``--without-backend``, only.
Anything else a test needs and ``make test`` installs (the S3 server's programs, compilers,
chromium, the dev extras) fails the test where it is absent. One exception, for machines that
run the GPU tests without the producer extra (Triton and the CUDA tool wheels): with
``TENSORACLE_TESTS_WITHOUT_PRODUCER=1`` the producer's tests skip, with the reason, instead of
failing (support/cubin_support.py).
Extras that ``make test`` does not install (torch for ``convert``, CuPy and cuda-python for GPU
execution, the full TensorRT builder) skip with the reason.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from pathlib import Path

import pytest

SUPPORT = Path(__file__).parent / "support"
sys.path.insert(0, str(SUPPORT))

# --installed-package: the suite run against the package installed from a wheel.
# --without-backend: tests needing TensorRT skip, instead of failing, where no backend imports.
import backend_requirement  # noqa: E402 (found in SUPPORT, put on the path above)
import installed_package  # noqa: E402

pytest_terminal_summary = installed_package.pytest_terminal_summary


def pytest_addoption(parser: pytest.Parser) -> None:
    installed_package.pytest_addoption(parser)
    backend_requirement.pytest_addoption(parser)


def pytest_configure(config: pytest.Config) -> None:
    backend_requirement.pytest_configure(config)
    installed_package.pytest_configure(config)


@functools.cache
def gpu_absent_reason() -> str | None:
    """Returns why no GPU can be used here, or None when the CUDA driver reports a device."""
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError as error:
        return f"no CUDA driver (libcuda.so.1: {error})"
    if driver.cuInit(0) != 0:
        return "the CUDA driver is present but cuInit failed"
    count = ctypes.c_int(0)
    if driver.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return "the CUDA driver reports no device"
    return None


backend_absent_reason = functools.cache(backend_requirement.backend_absent_reason)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("gpu") is not None:
        reason = gpu_absent_reason()
        if reason is not None:
            pytest.skip(f"needs a GPU: {reason}")
    if item.get_closest_marker("backend") is not None:
        reason = backend_absent_reason()
        if reason is not None:
            backend_requirement.backend_missing(reason)


@pytest.fixture
def engine_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private XDG_CACHE_HOME for one test; returns the tensoracle cache directory in it."""
    home = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home / "tensoracle"


@pytest.fixture(scope="session")
def s3_server():
    """A real S3 server for the session: a throwaway Ceph RADOS Gateway on 127.0.0.1."""
    import s3_server as ceph

    missing = ceph.missing_programs()
    if missing:
        pytest.fail(f"the Ceph S3 server needs {', '.join(missing)} (make test installs them)")
    server = ceph.start_server()
    try:
        yield server
    finally:
        server.stop()

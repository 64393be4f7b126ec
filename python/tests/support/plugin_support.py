"""Shared helpers for the cubin plugin tests: the example plugin wheel and the registry probe that
``make cubin-plugin`` builds, and TensorRT 11.4's lean runtime (the test dependency whose plugin
registry loads them). Importing this module imports neither tensoracle nor TensorRT."""

from __future__ import annotations

import atexit
import ctypes
import functools
import os
import shutil
import subprocess
import sysconfig
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
BUILT = REPO / "build" / "cubin-plugin"
PLUGIN_TESTS = REPO / "cpp" / "plugin" / "tests"
LIBRARY_IN_WHEEL = "tensoracle_example_plugin/libtensoracle_example_plugin.so"
NAMESPACE = "tensoracle_example"
PLUGINS = ("TensoracleBiasAdd", "TensoracleScale", "TensoracleRowDot")


def _built(variable: str, default: Path, what: str) -> Path:
    path = Path(os.environ.get(variable, default))
    if not path.exists():
        pytest.fail(f"{what} '{path}' is missing: run `make cubin-plugin` (or set {variable})")
    return path


def example_wheel() -> Path:
    """The example plugin wheel (examples/cubin_plugin) built by `make cubin-plugin`."""
    dist = BUILT / "dist"
    wheels = sorted(dist.glob("tensoracle_example_plugin-*.whl")) if dist.is_dir() else []
    default = wheels[-1] if wheels else dist / "tensoracle_example_plugin-*.whl"
    return _built("TENSORACLE_EXAMPLE_PLUGIN_WHEEL", default, "the example plugin wheel")


def probe() -> Path:
    """The registry probe (cpp/plugin/tests/plugin_probe.cpp)."""
    return _built("TENSORACLE_PLUGIN_PROBE", BUILT / "probe" / "plugin_probe", "the probe")


@functools.cache
def unpacked_wheel() -> Path:
    """The example wheel unpacked once per session into a private directory."""
    directory = Path(tempfile.mkdtemp(prefix="tensoracle-plugin-tests-"))
    atexit.register(shutil.rmtree, directory, True)
    with zipfile.ZipFile(example_wheel()) as wheel:
        wheel.extractall(directory)
    return directory


def example_library() -> Path:
    return unpacked_wheel() / LIBRARY_IN_WHEEL


def lean() -> Any:
    """TensorRT 11.4's lean runtime bindings (tensorrt_lean_libs must be imported first)."""
    pytest.importorskip("tensorrt_lean_libs", reason="tensorrt-lean-cu13-libs is not installed")
    return pytest.importorskip("tensorrt_lean_bindings")


def lean_library() -> Path:
    """libnvinfer_lean.so.11 from the tensorrt-lean-cu13-libs wheel."""
    import tensorrt_lean_libs

    return Path(tensorrt_lean_libs.__file__).parent / "libnvinfer_lean.so.11"


STUB_SOURCE = REPO / "cpp" / "plugin" / "cmake" / "cuda_driver_stub.cpp"


@functools.cache
def driver_environment() -> dict[str, str]:
    """What a process needs to load a plugin library, which depends on libcuda.so.1.

    With an NVIDIA driver installed, nothing. Without one (a build machine), the driver stub of
    the CMake helpers (every entry point returns CUDA_ERROR_STUB_LIBRARY), built here under the
    name libcuda.so.1 into a private folder that goes on LD_LIBRARY_PATH of the test's own
    subprocesses only: this pytest process never loads it, so its GPU detection is unchanged.
    """
    try:
        ctypes.CDLL("libcuda.so.1")
        return {}
    except OSError:
        pass
    directory = Path(tempfile.mkdtemp(prefix="tensoracle-driver-stub-"))
    atexit.register(shutil.rmtree, directory, True)
    cuda_include = Path(sysconfig.get_paths()["purelib"]) / "nvidia" / "cu13" / "include"
    subprocess.run(
        [
            "g++",
            "-shared",
            "-fPIC",
            "-Wl,-soname,libcuda.so.1",
            "-isystem",
            str(cuda_include),
            str(STUB_SOURCE),
            "-o",
            str(directory / "libcuda.so.1"),
        ],
        check=True,
    )
    previous = os.environ.get("LD_LIBRARY_PATH")
    return {"LD_LIBRARY_PATH": str(directory) + (f":{previous}" if previous else "")}


def loading_environment() -> dict[str, str]:
    """The environment for a subprocess that loads the example plugin library."""
    return {**os.environ, **driver_environment()}

"""Shared helpers for the cubin tests: the example bundle, built once per test session, and a
compiled library of its generated bundle.cpp."""

from __future__ import annotations

import atexit
import functools
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "cubin_kernels"
INCLUDE = REPO / "cpp" / "include"


@functools.cache
def _scratch() -> Path:
    directory = Path(tempfile.mkdtemp(prefix="tensoracle-cubin-tests-"))
    atexit.register(shutil.rmtree, directory, True)
    return directory


def require_producer_tools() -> None:
    """Skips, with the reason, where the producer extra (Triton, ptxas, cuobjdump) is absent."""
    pytest.importorskip("triton", reason="the producer extra (Triton) is not installed")
    from tensoracle.errors import ProducerToolError
    from tensoracle.producer import find_tool

    for tool in ("ptxas", "cuobjdump"):
        try:
            find_tool(tool)
        except ProducerToolError as error:
            pytest.skip(f"the producer extra is not installed: {error}")


def example_kernels() -> list:
    require_producer_tools()
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    from kernels import KERNELS

    return KERNELS


@functools.cache
def _example_bundle() -> Path:
    from tensoracle.producer import compile_bundle

    # Built by two worker processes; the reproducibility test builds it again in one process.
    return compile_bundle(example_kernels(), _scratch() / "example", jobs=2).directory


def example_bundle() -> Path:
    """The example kernel set compiled for every default target (read-only: copy to tamper)."""
    example_kernels()
    return _example_bundle()


def compile_library(bundle_cpp: Path, output: Path) -> Path:
    """Compiles a generated bundle.cpp into a shared library with the system C++ compiler."""
    compiler = shutil.which("c++") or shutil.which("g++")
    if compiler is None:
        pytest.skip("no C++ compiler on PATH")
    subprocess.run(
        [
            compiler,
            "-std=c++20",
            "-shared",
            "-fPIC",
            "-O1",
            f"-I{INCLUDE}",
            str(bundle_cpp),
            "-o",
            str(output),
        ],
        check=True,
    )
    return output


@functools.cache
def _example_library() -> Path:
    return compile_library(example_bundle() / "bundle.cpp", _scratch() / "libexample_bundle.so")


def example_library() -> Path:
    """A shared library built from the example bundle's bundle.cpp."""
    example_bundle()
    return _example_library()

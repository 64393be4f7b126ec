"""The CUDA tools the producer runs: where ptxas and cuobjdump come from and which ptxas it accepts.

By default both tools come from the PyPI wheels of the ``producer`` extra (``nvidia-cuda-nvcc``
holds ptxas, ``nvidia-cuda-cuobjdump`` holds cuobjdump), located through ``importlib.metadata``.
No environment variable (``CUDA_HOME`` included) and no ``PATH`` lookup is involved: a bundle is
built by the tools its producer extra pins, or by the paths the caller passes.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path

from tensoracle.errors import ProducerToolError

# tool -> PyPI distribution that ships it
TOOL_PACKAGES = {"ptxas": "nvidia-cuda-nvcc", "cuobjdump": "nvidia-cuda-cuobjdump"}

# The ptxas releases the producer accepts: >=13.2.0, <14.0.0.
PTXAS_MINIMUM = (13, 2, 0)
PTXAS_LIMIT = (14, 0, 0)

_RELEASE = re.compile(r"V(\d+)\.(\d+)\.(\d+)")


def tool_relative_path(tool: str) -> str:
    """The tool's path inside its wheel, relative to site-packages."""
    suffix = ".exe" if sys.platform == "win32" else ""
    return f"nvidia/cu13/bin/{tool}{suffix}"


def wheel_tool(tool: str) -> Path:
    """The path of ``tool`` ("ptxas" or "cuobjdump") inside its installed wheel.

    Raises:
        ImportError: The wheel is not installed.
        FileNotFoundError: The wheel is installed but the tool is not where it should be.
    Both messages name the package, the path inside it, the ``producer`` extra and the
    ``<tool>=`` keyword of ``compile_bundle`` that bypasses the lookup.
    """
    package = TOOL_PACKAGES[tool]
    relative = tool_relative_path(tool)
    advice = (
        f"install it with `pip install 'tensoracle[producer]'`, or pass {tool}=PATH to "
        "compile_bundle"
    )
    try:
        distribution = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        raise ImportError(
            f"{tool} is taken from the PyPI package {package} (file {relative}), which is not "
            f"installed; {advice}",
            name=package,
        ) from None
    location = Path(str(distribution.locate_file(relative)))
    if not location.is_file():
        raise ProducerToolError(
            f"{tool} is missing from the installed package {package}: no file {relative} "
            f"(looked at {location}); reinstall the package ({advice})"
        )
    return location


def find_tool(tool: str, explicit: str | os.PathLike[str] | None = None) -> Path:
    """A usable ``tool``: ``explicit`` when given, else the wheel's (``tensoracle doctor``).

    Unlike ``compile_bundle``, which uses an explicit path unchecked, this checks that the file
    exists and is executable, and reports every problem as one class.

    Raises:
        ProducerToolError: The tool is unavailable; the message says why and how to fix it.
    """
    if explicit is None:
        try:
            return wheel_tool(tool)
        except ImportError as error:
            raise ProducerToolError(str(error)) from None
    candidate = Path(explicit)
    if not (candidate.is_file() and os.access(candidate, os.X_OK)):
        raise ProducerToolError(f"{tool} not found at {candidate} (the path passed explicitly)")
    return candidate


def tool_version(path: Path) -> str:
    """The full release a CUDA tool prints for ``--version``, e.g. ``"13.2.86"``.

    Raises:
        subprocess.CalledProcessError: The tool exits with a failure.
        FileNotFoundError: ``path`` does not exist.
        ValueError: Neither stdout nor stderr carries a ``V<x.y.z>`` release.
    """
    result = subprocess.run(
        [str(path), "--version"], check=True, capture_output=True, text=True, errors="replace"
    )
    found = _RELEASE.search(result.stdout + result.stderr)
    if found is None:
        raise ValueError(
            f"{path} --version printed no release number (V<x.y.z>): "
            f"{(result.stdout + result.stderr).strip()[:500]!r}"
        )
    return ".".join(found.groups())


def ptxas_version(path: Path) -> str:
    """The release of ``path`` as ptxas, checked to be >=13.2,<14.

    Raises:
        ValueError: No release in the output, or one outside the accepted range.
        subprocess.CalledProcessError, FileNotFoundError: As :func:`tool_version`.
    """
    version = tool_version(path)
    release = tuple(int(part) for part in version.split("."))
    if not PTXAS_MINIMUM <= release < PTXAS_LIMIT:
        raise ValueError(
            f"ptxas at {path} is release {version}; the producer needs ptxas >=13.2,<14 "
            "(the nvidia-cuda-nvcc 13.2 wheel of tensoracle[producer], or another ptxas=PATH)"
        )
    return version

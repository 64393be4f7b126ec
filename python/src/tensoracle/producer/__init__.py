"""Compiles Triton kernels into a cubin bundle: ``cubins/sm<SM>/<name>.cubin`` per kernel and SM,
``bundle.json`` and ``bundle.cpp`` (the translation unit that embeds the bundle in a plugin).

Production needs neither a GPU nor torch: Triton compiles for explicit targets and the CUDA
tools come from the PyPI wheels of the ``producer`` extra. Importing this package imports only
:mod:`tensoracle.bundle` and its own helpers (``checks``: names and targets, ``compile``: Triton
to cubins in worker processes, ``cubin``: the cubins' parameter layouts, ``tools``: the CUDA
tools, ``bundle_source``: bundle.cpp); Triton is imported when :func:`compile_bundle` runs, and
``import tensoracle`` does not import this package.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tensoracle import bundle
from tensoracle.producer.bundle_source import render_bundle_cpp
from tensoracle.producer.checks import DEFAULT_TARGETS, SUPPORTED_TARGETS, check_names
from tensoracle.producer.compile import Pair, compile_pairs
from tensoracle.producer.tools import find_tool as find_tool  # for tensoracle doctor
from tensoracle.producer.tools import ptxas_version, wheel_tool
from tensoracle.producer.tools import tool_version as tool_version  # for tensoracle doctor

__all__ = ["KernelSpec", "compile_bundle"]

TRITON_VERSION = "3.8.0"


@dataclass(frozen=True)
class KernelSpec:
    """One kernel of a bundle: a Triton function with its argument types and constants.

    Args:
        name: The kernel's name in the bundle, matching ``[a-zA-Z0-9_.-]+`` and unique in it. It
            names the cubins (``cubins/sm<SM>/<name>.cubin``) and the lookup id
            ``"sm<SM>.<name>"``.
        function: The ``@triton.jit`` function.
        signature: ``(name, triton type)`` for every argument that is not a constexpr, in the
            function's order. Types: ``"*fp16"``, ``"*fp32"``, ``"*i8"``, ``"*i32"`` (device
            pointers), ``"i32"``, ``"fp32"``; 1 to 14 arguments.
        constexprs: The value of every ``tl.constexpr`` parameter.
        divisible_by: Divisors the kernel may assume, by argument (a pointer's address, an
            integer's value): powers of two from 1 to 2**30, only 1 for ``fp32`` arguments. The
            plugin SDK refuses launches that break them.
        num_warps: Warps per program (keyword only); a block has ``num_warps * 32`` threads.
        num_stages: Triton's software-pipelining depth (keyword only).
    """

    name: str
    function: Any
    signature: tuple[tuple[str, str], ...]
    constexprs: dict[str, int]
    divisible_by: dict[str, int] = field(default_factory=dict)
    num_warps: int = field(default=4, kw_only=True)
    num_stages: int = field(default=3, kw_only=True)


def _import_triton() -> Any:
    try:
        import triton
    except ImportError as error:
        raise ImportError(
            "compile_bundle needs Triton, which is not importable here "
            f"({type(error).__name__}: {error}); install it with "
            "`pip install 'tensoracle[producer]'`"
        ) from error
    version = getattr(triton, "__version__", None)
    if version != TRITON_VERSION:
        raise ValueError(
            f"compile_bundle needs Triton {TRITON_VERSION}, found {version}; install "
            "`tensoracle[producer]`, which pins it"
        )
    return triton


def _check_targets(targets: Iterable[int]) -> list[int]:
    values = list(targets)
    for sm in values:
        if type(sm) is not int or sm not in SUPPORTED_TARGETS:
            raise ValueError(
                f"targets: {sm!r} is not a supported SM; choose from {SUPPORTED_TARGETS}"
            )
    if not values or len(set(values)) != len(values):
        raise ValueError(f"targets must be distinct SMs and not empty, got {values}")
    return sorted(values)


def _check_jobs(jobs: int | None) -> int:
    if jobs is None:
        if hasattr(os, "sched_getaffinity"):
            return max(1, len(os.sched_getaffinity(0)))
        return os.cpu_count() or 1
    if type(jobs) is not int or jobs < 1:
        raise ValueError(f"jobs must be a positive int or None (the CPU count), got {jobs!r}")
    return jobs


def compile_bundle(
    specs: tuple[KernelSpec, ...],
    output: Path,
    *,
    ptxas: Path | None = None,
    cuobjdump: Path | None = None,
    targets: tuple[int, ...] = DEFAULT_TARGETS,
    jobs: int | None = None,
) -> dict[str, Any]:
    """Compiles every kernel for every target SM and writes the bundle into ``output``.

    Everything is checked before anything is written: torch not imported, Triton 3.8.0, the
    tools, ptxas >=13.2,<14, the kernel names. Then ``output`` is created if needed (files of
    an earlier bundle are overwritten, other files kept), the Triton environment variables are
    set for this process (``TRITON_PTXAS_PATH``, ``TRITON_PTXAS_BLACKWELL_PATH``,
    ``TRITON_DISABLE_LINE_INFO=1``, ``TRITON_ALWAYS_COMPILE=1``; they stay set) and the kernels
    are compiled SM by SM, each cubin checked (its SM, parameter layout, registers, no scratch).
    Last, ``bundle.json`` and ``bundle.cpp`` are written and the bundle is inspected. The same
    inputs give byte-identical files, whatever ``jobs``; nothing in them names a host or a path.

    Args:
        specs: The kernels, with unique names.
        output: The bundle directory.
        ptxas: A ptxas to use, as is, instead of the ``nvidia-cuda-nvcc`` wheel's.
        cuobjdump: A cuobjdump to use, as is, instead of the ``nvidia-cuda-cuobjdump`` wheel's.
        targets: The SMs to compile for, from 80, 86, 89, 90, 100 and 120; the bundle lists
            them in ascending order.
        jobs: Worker processes compiling (SM, kernel) pairs at once; ``None`` uses every CPU
            this process may run on, ``1`` compiles in this process. Workers are forked, so
            kernels defined anywhere (a script, a test) work.

    Returns:
        The manifest written to ``bundle.json``, ``bundle_sha256`` included.

    Raises:
        ValueError: torch is imported, Triton is not 3.8.0, the ptxas release is unknown or out
            of range, names are empty or repeated, ``targets`` or ``jobs`` is invalid, a spec
            breaks a rule, Triton fails (``KernelCompileError``), a cubin differs from what the
            launcher expects; ``BundleError`` when the written bundle fails inspection.
        ImportError: Triton, or a tool's wheel, is not installed.
        FileNotFoundError: A tool is missing from its installed wheel, or an explicit path
            does not exist.
        subprocess.CalledProcessError: ``ptxas --version`` or cuobjdump fails.
    """
    if "torch" in sys.modules:
        raise ValueError(
            "torch is imported in this process; compile_bundle runs without it, so that Triton "
            "cannot pick up a GPU or torch state: build bundles in a separate process"
        )
    triton = _import_triton()
    ptxas_path = wheel_tool("ptxas") if ptxas is None else Path(ptxas)
    cuobjdump_path = wheel_tool("cuobjdump") if cuobjdump is None else Path(cuobjdump)
    ptxas_release = ptxas_version(ptxas_path)
    specs = tuple(specs)
    check_names([spec.name for spec in specs])
    sms = _check_targets(targets)
    workers = _check_jobs(jobs)

    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    os.environ["TRITON_PTXAS_PATH"] = str(ptxas_path)
    os.environ["TRITON_PTXAS_BLACKWELL_PATH"] = str(ptxas_path)
    os.environ["TRITON_DISABLE_LINE_INFO"] = "1"
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"

    pairs = [Pair(spec, sm, output, cuobjdump_path) for sm in sms for spec in specs]
    entries = compile_pairs(pairs, workers)
    manifest: dict[str, Any] = {
        "schema_version": 1,
        "producer": {"triton": triton.__version__, "ptxas": ptxas_release},
        "entries": entries,
    }
    manifest["bundle_sha256"] = bundle.bundle_sha256(manifest)
    cubins = {entry["file"]: (output / entry["file"]).read_bytes() for entry in entries}
    text = json.dumps(manifest, sort_keys=True, indent=2) + "\n"
    (output / "bundle.json").write_bytes(text.encode("utf-8"))
    (output / "bundle.cpp").write_bytes(render_bundle_cpp(manifest, cubins).encode("ascii"))
    bundle.inspect_bundle(output)
    if "torch" in sys.modules:
        raise ValueError(
            "torch was imported while the bundle was compiled; the bundle may depend on it, "
            "rebuild it in a process that never imports torch"
        )
    return manifest

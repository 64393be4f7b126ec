"""Compiles Triton kernels into a cubin bundle: cubins per kernel and SM, bundle.json, bundle.cpp.

Production needs neither a GPU nor torch: Triton compiles for an explicit target and the CUDA
tools come from the PyPI wheels of the ``producer`` extra (``nvidia-cuda-nvcc`` for ptxas,
``nvidia-cuda-cuobjdump`` for cuobjdump). Importing this module imports no Triton; only
:func:`compile_bundle` does. ``import tensoracle`` does not import this module.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sysconfig
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tensoracle.bundle_source import render_bundle_cpp
from tensoracle.errors import BundleAbiError, KernelCompileError, ProducerToolError

# sm86, sm89 and sm120 are the supported plugin targets; sm80, sm90 and sm100 are built too so
# that A100, H100/H200 and B200 class devices can run the same bundle.
DEFAULT_TARGETS: tuple[int, ...] = (80, 86, 89, 90, 100, 120)

# The hidden parameters Triton 3.x appends after a kernel's public ones.
HIDDEN_ARGS: tuple[str, ...] = ("global_scratch", "profile_scratch")

_TOOL_PACKAGES = {"ptxas": "nvidia-cuda-nvcc", "cuobjdump": "nvidia-cuda-cuobjdump"}
_PTXAS_RANGE = ((13, 2), (14, 0))
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The PTX parameter spelling Triton emits for each public argument type.
_PTX_PARAM = {"pointer": ".u64", "i32": ".u32", "i64": ".u64", "fp32": ".f32", "fp64": ".f64"}


@dataclass(frozen=True)
class KernelSpec:
    """One kernel variant of a bundle.

    Args:
        name: The variant's name in the bundle (a C identifier, unique in the bundle); it names
            the cubin files ``sm<SM>/<name>.cubin``.
        fn: The ``@triton.jit`` function.
        signature: Every public (non-constexpr) argument in the function's order, mapped to its
            Triton type: ``"*fp32"`` (any ``*`` type is a device pointer), ``"i32"``, ``"i64"``,
            ``"fp32"`` or ``"fp64"``.
        constants: A value for every ``tl.constexpr`` parameter.
        divisibility: Public arguments assumed divisible by 16 (a pointer's address, an
            integer's value); the runtime refuses launches that break the assumption.
        num_warps: Warps per program; the block has ``num_warps * 32`` threads.
        num_stages: Triton's software-pipelining depth.
    """

    name: str
    fn: Any
    signature: Mapping[str, str]
    constants: Mapping[str, int | float | bool | str] = field(default_factory=dict)
    divisibility: Mapping[str, int] = field(default_factory=dict)
    num_warps: int = 4
    num_stages: int = 3


@dataclass(frozen=True)
class Bundle:
    """What :func:`compile_bundle` wrote: the directory, its manifest and the manifest's digest."""

    directory: Path
    manifest: dict[str, Any]
    sha256: str


def find_tool(tool: str, explicit: str | os.PathLike[str] | None = None) -> Path:
    """Returns the path of ``ptxas`` or ``cuobjdump``: ``explicit`` when given, else the wheel's.

    Raises:
        ProducerToolError: The tool is not at that path; the message names the PyPI package,
            the path searched and how to fix it.
    """
    package = _TOOL_PACKAGES[tool]
    if explicit is not None:
        candidate = Path(explicit)
        where = "the path passed explicitly"
    else:
        relative = f"nvidia/cu13/bin/{tool}"
        try:
            candidate = Path(str(importlib.metadata.distribution(package).locate_file(relative)))
        except importlib.metadata.PackageNotFoundError:
            candidate = Path(sysconfig.get_paths()["purelib"]) / relative
        where = f"the default location inside the {package} wheel"
    if not (candidate.is_file() and os.access(candidate, os.X_OK)):
        raise ProducerToolError(
            f"{tool} not found at {candidate} ({where}). It comes from the PyPI package "
            f"{package} (13.2 series): install it with `pip install 'tensoracle[producer]'`, "
            f"or pass {tool}=PATH to compile_bundle."
        )
    return candidate


def tool_version(path: Path) -> str:
    """The full release of a CUDA tool, e.g. ``13.2.86``, read from ``--version``."""
    output = subprocess.run(
        [str(path), "--version"], check=True, capture_output=True, text=True
    ).stdout
    found = re.search(r"V(\d+\.\d+\.\d+)", output)
    if found is None:
        raise ProducerToolError(f"{path} --version printed no release number: {output!r}")
    return found.group(1)


def _check_ptxas_version(path: Path, version: str) -> None:
    major_minor = tuple(int(part) for part in version.split(".")[:2])
    low, high = _PTXAS_RANGE
    if not low <= major_minor < high:
        raise ProducerToolError(
            f"ptxas at {path} is release {version}; the producer needs >=13.2,<14 "
            "(install tensoracle[producer] or pass another ptxas=PATH)"
        )


def _arg_kind(kernel: str, arg: str, triton_type: str) -> str:
    if triton_type.startswith("*"):
        return "pointer"
    if triton_type in ("i32", "i64", "fp32", "fp64"):
        return triton_type
    raise BundleAbiError(
        f"kernel {kernel!r}: argument {arg!r} has type {triton_type!r}; supported are pointers "
        "('*fp32', ...), 'i32', 'i64', 'fp32' and 'fp64'"
    )


def _validate(spec: KernelSpec) -> list[str]:
    """Checks a spec against its function and returns the function's parameter names."""
    if not _NAME.fullmatch(spec.name):
        raise ValueError(f"KernelSpec.name {spec.name!r} is not a C identifier")
    names = list(getattr(spec.fn, "arg_names", []))
    if not names:
        raise ValueError(f"kernel {spec.name!r}: fn is not a @triton.jit function")
    constexprs = {p.name for p in spec.fn.params if p.is_constexpr}
    for name in names:
        if name in constexprs and name not in spec.constants:
            raise ValueError(f"kernel {spec.name!r}: constexpr parameter {name!r} has no constant")
        if name not in constexprs and name not in spec.signature:
            raise ValueError(f"kernel {spec.name!r}: argument {name!r} has no signature type")
    for name in [*spec.signature, *spec.constants]:
        if name not in names:
            raise ValueError(f"kernel {spec.name!r}: {name!r} is not a parameter of {names}")
    public = [name for name in names if name not in constexprs]
    if list(spec.signature) != public:
        raise ValueError(
            f"kernel {spec.name!r}: signature order {list(spec.signature)} differs from the "
            f"function's public parameters {public}"
        )
    for name, value in spec.divisibility.items():
        if name not in spec.signature:
            raise ValueError(f"kernel {spec.name!r}: divisibility names unknown argument {name!r}")
        if value != 16:
            raise ValueError(
                f"kernel {spec.name!r}: divisibility of {name!r} is {value}; Triton supports 16"
            )
        if spec.signature[name] in ("fp32", "fp64"):
            raise ValueError(f"kernel {spec.name!r}: divisibility of float argument {name!r}")
    for name, triton_type in spec.signature.items():
        _arg_kind(spec.name, name, triton_type)
    return names


def _check_ptx_abi(spec: KernelSpec, function: str, ptx: str, sm: int) -> None:
    """Rejects a kernel whose PTX entry parameters are not the public ones plus two scratch."""
    entry = re.search(r"\.entry\s+" + re.escape(function) + r"\s*\(([^)]*)\)", ptx)
    if entry is None:
        raise BundleAbiError(f"kernel {spec.name!r} (sm{sm}): no PTX entry {function!r}")
    params = [line.strip() for line in entry.group(1).split(",") if line.strip()]
    expected = [_PTX_PARAM[_arg_kind(spec.name, n, t)] for n, t in spec.signature.items()]
    expected += [".u64", ".u64"]
    found = [p.split()[1] if len(p.split()) > 1 else "?" for p in params]
    if found != expected:
        raise BundleAbiError(
            f"kernel {spec.name!r} (sm{sm}): parameter ABI {found} differs from the expected "
            f"{expected} (public arguments, then global and profile scratch pointers)"
        )


def _resource_usage(cuobjdump: Path, cubin: Path, function: str) -> dict[str, int]:
    output = subprocess.run(
        [str(cuobjdump), "--dump-resource-usage", str(cubin)],
        check=True,
        capture_output=True,
        text=True,
        env={"LC_ALL": "C", "PATH": os.environ.get("PATH", "")},
    ).stdout
    block = output.split(f"Function {function}:", 1)
    if len(block) != 2:
        raise BundleAbiError(f"cuobjdump reports no function {function!r} in {cubin.name}")
    usage = dict(re.findall(r"(REG|STACK|SHARED|LOCAL):(\d+)", block[1].split("Function ")[0]))
    return {key: int(value) for key, value in usage.items()}


def _source_sha256(fn: Any) -> str:
    source = getattr(fn, "src", None)
    if not isinstance(source, str):
        raise ValueError(f"cannot read the source of {fn!r}")
    return hashlib.sha256(source.encode()).hexdigest()


def _check_jobs(jobs: int | None) -> int:
    if jobs is None:
        if hasattr(os, "sched_getaffinity"):
            return max(1, len(os.sched_getaffinity(0)))
        return os.cpu_count() or 1
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer or None (the CPU count), got {jobs!r}")
    return jobs


@dataclass(frozen=True)
class _Pair:
    """One unit of work: a kernel compiled for one SM, its cubin written under ``staging``."""

    spec: KernelSpec
    sm: int
    staging: Path
    cache: Path
    cuobjdump: Path


def _compile_pair(pair: _Pair) -> dict[str, Any]:
    """Compiles one (kernel, SM) pair, checks its ABI, writes its cubin and returns its record.

    Runs in the calling process or in a forked worker. Triton's own failures come back as
    :class:`KernelCompileError` naming the kernel and SM, since they may not survive pickling.
    """
    import triton
    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    spec, sm = pair.spec, pair.sm
    param_names = list(spec.fn.arg_names)
    signature = {name: spec.signature.get(name, "constexpr") for name in param_names}
    attrs = {(param_names.index(name),): [["tt.divisibility", 16]] for name in spec.divisibility}
    constexprs = dict(spec.constants)
    source = ASTSource(fn=spec.fn, signature=signature, constexprs=constexprs, attrs=attrs)
    # A private Triton cache directory per pair: no two processes ever share cache entries.
    with knobs.cache.scope():
        knobs.cache.dir = str(pair.cache / f"{spec.name}.sm{sm}")
        try:
            compiled = triton.compile(
                source,
                target=GPUTarget("cuda", sm, 32),
                options={"num_warps": spec.num_warps, "num_stages": spec.num_stages},
            )
        except Exception as error:
            raise KernelCompileError(
                f"kernel {spec.name!r} (sm{sm}): Triton failed to compile it: "
                f"{type(error).__name__}: {error}"
            ) from error
    metadata = compiled.metadata
    function = metadata.name
    scratch = (
        int(getattr(metadata, "global_scratch_size", 0)),
        int(getattr(metadata, "profile_scratch_size", 0)),
    )
    if scratch != (0, 0):
        raise BundleAbiError(
            f"kernel {spec.name!r} (sm{sm}) needs scratch memory (global "
            f"{scratch[0]} B, profile {scratch[1]} B); only zero is supported"
        )
    if int(getattr(metadata, "num_ctas", 1)) != 1:
        raise BundleAbiError(f"kernel {spec.name!r}: num_ctas must be 1")
    _check_ptx_abi(spec, function, compiled.asm["ptx"], sm)
    blob: bytes = compiled.asm["cubin"]
    relative = f"sm{sm}/{spec.name}.cubin"
    (pair.staging / f"sm{sm}").mkdir(exist_ok=True)
    (pair.staging / relative).write_bytes(blob)
    usage = _resource_usage(pair.cuobjdump, pair.staging / relative, function)
    return {
        "function": function,
        "scratch": scratch,
        "cubin": {
            "sm": sm,
            "path": relative,
            "sha256": hashlib.sha256(blob).hexdigest(),
            "bytes": len(blob),
            "registers": usage.get("REG", 0),
            "shared_bytes": int(metadata.shared),
        },
    }


# The pairs of the build in progress, set before the worker processes are forked: a forked
# worker finds its pair here by index, so no @triton.jit function ever needs pickling.
_PAIRS: list[_Pair] = []


def _compile_forked(index: int) -> dict[str, Any]:
    return _compile_pair(_PAIRS[index])


def _compile_pairs(pairs: list[_Pair], jobs: int) -> list[dict[str, Any]]:
    """Every pair's record, in the order of ``pairs`` whatever order the workers finish in.

    With several failures, the first pair in that order is the one reported, as in a serial
    build; once a failure is known, pairs not yet started are cancelled.
    """
    workers = min(jobs, len(pairs))
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [_compile_pair(pair) for pair in pairs]
    global _PAIRS
    _PAIRS = pairs
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            futures: list[Future[dict[str, Any]]] = [
                pool.submit(_compile_forked, index) for index in range(len(pairs))
            ]
            try:
                return [future.result() for future in futures]
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
    finally:
        _PAIRS = []


def compile_bundle(
    kernels: Sequence[KernelSpec],
    output_dir: str | os.PathLike[str],
    *,
    targets: Sequence[int] = DEFAULT_TARGETS,
    ptxas: str | os.PathLike[str] | None = None,
    cuobjdump: str | os.PathLike[str] | None = None,
    overwrite: bool = False,
    jobs: int | None = None,
) -> Bundle:
    """Compiles every kernel for every target SM and writes the bundle directory.

    The directory receives ``sm<SM>/<kernel>.cubin`` files, ``bundle.json`` (Triton and ptxas
    versions, each kernel's argument ABI, source SHA-256 and cubin digests; no host names or
    paths) and ``bundle.cpp``, which embeds exactly these cubins. The same inputs give
    byte-identical files. The bundle is assembled in a temporary sibling directory and moved into
    place at the end, so a failed build leaves ``output_dir`` as it was.

    Args:
        kernels: The kernel variants; names must be unique.
        output_dir: Where the bundle goes. An existing directory is replaced only with
            ``overwrite=True``.
        targets: SM numbers, e.g. ``(86, 89, 120)``.
        ptxas: A ptxas to use instead of the ``nvidia-cuda-nvcc`` wheel's.
        cuobjdump: A cuobjdump to use instead of the ``nvidia-cuda-cuobjdump`` wheel's.
        overwrite: Replace an existing ``output_dir``.
        jobs: Worker processes compiling (kernel, target) pairs at once; ``None`` (the default)
            uses every CPU this process may run on, ``1`` compiles in this process. Workers are
            forked, so kernels defined anywhere (a script, a test) work; they never touch CUDA.
            The files written do not depend on ``jobs``.

    Raises:
        ProducerToolError: A tool is missing or ptxas is outside >=13.2,<14.
        BundleAbiError: A kernel's parameters are not the expected ABI or it needs scratch memory.
        KernelCompileError: Triton cannot compile a kernel; the message names it and the SM.
        ValueError: A KernelSpec does not match its function, or ``jobs`` is not positive.
        FileExistsError: ``output_dir`` exists and ``overwrite`` is false.
    """
    workers = _check_jobs(jobs)
    ptxas_path = find_tool("ptxas", ptxas)
    cuobjdump_path = find_tool("cuobjdump", cuobjdump)
    ptxas_version = tool_version(ptxas_path)
    _check_ptxas_version(ptxas_path, ptxas_version)
    destination = Path(output_dir)
    if destination.exists() and not overwrite:
        raise FileExistsError(f"bundle directory {destination} exists; pass overwrite=True")
    names = [spec.name for spec in kernels]
    if len(set(names)) != len(names) or not names:
        raise ValueError(f"kernel names must be unique and non-empty, got {names}")
    target_list = sorted({int(sm) for sm in targets})
    if not target_list:
        raise ValueError("targets is empty")
    for spec in kernels:
        _validate(spec)

    # Imported here so that importing tensoracle.producer stays cheap and torch-free.
    import triton
    from triton import knobs

    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{destination.name}.", dir=destination.parent))
    cache = Path(tempfile.mkdtemp(prefix="tensoracle-triton-cache-"))
    try:
        with knobs.nvidia.scope(), knobs.cache.scope(), knobs.compilation.scope():
            knobs.nvidia.ptxas = str(ptxas_path)
            knobs.nvidia.ptxas_blackwell = str(ptxas_path)
            knobs.cache.dir = str(cache)
            knobs.compilation.always_compile = True
            knobs.compilation.disable_line_info = True
            pairs = [
                _Pair(spec, sm, staging, cache, cuobjdump_path)
                for spec in kernels
                for sm in target_list
            ]
            results = iter(_compile_pairs(pairs, workers))
            entries = []
            for spec in kernels:
                built = [next(results) for _ in target_list]
                function = built[-1]["function"]
                scratch = built[-1]["scratch"]
                entries.append(
                    {
                        "name": spec.name,
                        "function": function,
                        "source_sha256": _source_sha256(spec.fn),
                        "num_warps": spec.num_warps,
                        "num_stages": spec.num_stages,
                        "constants": {key: spec.constants[key] for key in sorted(spec.constants)},
                        "args": [
                            {
                                "name": name,
                                "type": triton_type,
                                "divisibility": spec.divisibility.get(name, 1),
                            }
                            for name, triton_type in spec.signature.items()
                        ],
                        "hidden_args": list(HIDDEN_ARGS),
                        "global_scratch_bytes": scratch[0],
                        "profile_scratch_bytes": scratch[1],
                        "cubins": [item["cubin"] for item in built],
                    }
                )
        manifest: dict[str, Any] = {
            "format": "tensoracle-cubin-bundle",
            "version": 1,
            "producer": {"triton": triton.__version__, "ptxas": ptxas_version},
            "targets": target_list,
            "kernels": entries,
        }
        manifest_bytes = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
        (staging / "bundle.json").write_bytes(manifest_bytes)
        digest = hashlib.sha256(manifest_bytes).hexdigest()
        cubin_bytes = {
            cubin["path"]: (staging / cubin["path"]).read_bytes()
            for entry in entries
            for cubin in entry["cubins"]
        }
        (staging / "bundle.cpp").write_text(render_bundle_cpp(manifest, digest, cubin_bytes))
        os.chmod(staging, 0o755)
        if destination.exists():
            shutil.rmtree(destination)
        staging.rename(destination)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return Bundle(destination, manifest, digest)

"""Compiling one (SM, kernel) pair of a bundle into its cubin and manifest entry, serially or in
forked worker processes.

Each pair is independent: it checks its spec, compiles with Triton for an explicit target (no
GPU involved), writes ``cubins/sm<SM>/<name>.cubin`` and reads back what the launcher relies on
(SM, parameter layout, registers, scratch). Results come back in the order of the pairs whatever
order the workers finish in, and the first failing pair in that order is the one reported, so a
parallel build writes and raises what a serial one would.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import tempfile
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tensoracle.errors import KernelCompileError
from tensoracle.producer.checks import SUPPORTED_TARGETS, check_spec, embedded_symbol
from tensoracle.producer.cubin import (
    HIDDEN_TRAILING_PARAMETERS,
    check_parameter_layout,
    registers_per_thread,
)


@dataclass(frozen=True)
class Pair:
    """One unit of work: ``spec`` (a KernelSpec) compiled for ``sm`` into ``output``."""

    spec: Any
    sm: int
    output: Path
    cuobjdump: Path


def source_sha256(function: Any) -> str:
    """SHA-256 of the Triton function's source text, UTF-8 encoded."""
    return hashlib.sha256(function.src.encode("utf-8")).hexdigest()


def _triton_compile(spec: Any, sm: int, where: str) -> Any:
    import triton
    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    arg_names = list(spec.function.arg_names)
    types = dict(spec.signature)
    signature = {arg: types.get(arg, "constexpr") for arg in arg_names}
    # A divisor of 1 promises nothing, so it adds no attribute.
    attrs = {
        (arg_names.index(arg),): [["tt.divisibility", divisor]]
        for arg, divisor in spec.divisible_by.items()
        if divisor > 1
    }
    source = ASTSource(
        fn=spec.function, signature=signature, constexprs=dict(spec.constexprs), attrs=attrs
    )
    # A private, throw-away Triton cache: no user cache is read or filled, and no two workers
    # ever share an entry.
    with tempfile.TemporaryDirectory(prefix="tensoracle-triton-") as cache, knobs.cache.scope():
        knobs.cache.dir = cache
        try:
            return triton.compile(
                source,
                target=GPUTarget("cuda", sm, 32),
                options={"num_warps": spec.num_warps, "num_stages": spec.num_stages},
            )
        except Exception as error:
            raise KernelCompileError(
                f"{where}: Triton cannot compile it: {type(error).__name__}: {error}"
            ) from None


def compile_pair(pair: Pair) -> dict[str, Any]:
    """Checks, compiles and writes one pair; returns its manifest entry.

    Raises:
        ValueError: A spec rule, the cubin's SM, parameter layout, register count or scratch
            needs (KernelCompileError, a ValueError, when Triton fails).
    """
    from tensoracle import bundle

    spec, sm = pair.spec, pair.sm
    check_spec(spec)
    where = f"kernel {spec.name!r} (sm{sm})"
    compiled = _triton_compile(spec, sm, where)
    metadata = compiled.metadata
    entry_symbol = str(metadata.name)
    data: bytes = compiled.asm["cubin"]
    relative = f"cubins/sm{sm}/{spec.name}.cubin"
    path = pair.output / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    found_sm = bundle.cubin_sm(data, targets=[f"sm{target}" for target in SUPPORTED_TARGETS])
    if found_sm != f"sm{sm}":
        raise ValueError(f"{where}: Triton produced a cubin for {found_sm}, not sm{sm}")
    types = [triton_type for _, triton_type in spec.signature]
    check_parameter_layout(pair.cuobjdump, path, entry_symbol, types, where)
    registers = registers_per_thread(pair.cuobjdump, path, entry_symbol, where)
    scratch = {
        "global": int(getattr(metadata, "global_scratch_size", 0) or 0),
        "profile": int(getattr(metadata, "profile_scratch_size", 0) or 0),
    }
    if any(scratch.values()):
        raise ValueError(
            f"{where} needs scratch memory (global {scratch['global']} bytes, profile "
            f"{scratch['profile']} bytes); bundle kernels must need none"
        )
    shared = int(metadata.shared)
    return {
        "id": f"sm{sm}.{spec.name}",
        "file": relative,
        "target_sm": f"sm{sm}",
        "entry_symbol": entry_symbol,
        "embedded_symbol": embedded_symbol(sm, spec.name),
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
        "signature": [{"name": arg, "type": triton_type} for arg, triton_type in spec.signature],
        "hidden_trailing_parameters": [
            {"name": name, "parameter_bytes": size} for name, size in HIDDEN_TRAILING_PARAMETERS
        ],
        "resources": {
            "compiled_shared_memory_bytes": shared,
            "launch_dynamic_shared_memory_bytes": shared,
            "registers_per_thread": registers,
            "global_scratch_bytes": 0,
            "profile_scratch_bytes": 0,
        },
        "specialization": {
            "divisible_by": {arg: int(value) for arg, value in spec.divisible_by.items()}
        },
        "source_sha256": source_sha256(spec.function),
    }


# The pairs of the parallel build in progress, set before the workers are forked: a worker finds
# its pair here by index, so no @triton.jit function ever needs pickling.
_PAIRS: list[Pair] = []


def _compile_forked(index: int) -> dict[str, Any]:
    return compile_pair(_PAIRS[index])


def compile_pairs(pairs: list[Pair], jobs: int) -> list[dict[str, Any]]:
    """Every pair's entry, in the order of ``pairs``; ``jobs`` worker processes at most.

    With one job, or where ``fork`` is unavailable, pairs are compiled here one after another
    and the first failure stops the build. In parallel, pairs not yet started are cancelled once
    a failure is known, and the failure reported is the first in pair order.
    """
    workers = min(jobs, len(pairs))
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [compile_pair(pair) for pair in pairs]
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

"""Adapter for TensorRT-RTX (module ``tensorrt_rtx``): what differs from TensorRT 11, nothing more.

RTX builds ahead of time for a list of compute capabilities without needing a GPU. The list is
``BuilderSettings.targets`` when the declaration gives one, else ``TENSORACLE_RTX_TARGETS``
(comma-separated ``sm75,sm80,sm86,sm89,sm120,sm121``, or ``current`` for the local GPU only), by
default the RTX default set sm80, sm86, sm89 and sm120.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from tensoracle.engine.declaration import sorted_targets

NAME = "tensorrt_rtx"
MODULE_NAME = "tensorrt_rtx"
EXTRA = "tensoracle[rtx]"
OPTIMIZATION_LEVELS = range(0, 6)
# INetworkDefinition has no add_plugin/add_plugin_v2/add_plugin_v3; the plugin registry exists.
NETWORK_PLUGIN_LAYERS = False

TARGETS_VARIABLE = "TENSORACLE_RTX_TARGETS"
DEFAULT_TARGETS = ("sm80", "sm86", "sm89", "sm120")
KNOWN_TARGETS = ("sm75", "sm80", "sm86", "sm89", "sm120", "sm121")
_CURRENT = "current"
# What TensorRT-RTX 1.7.1.116 refuses to compile, observed in real builds (docs/backends.md):
# tensor type name -> the targets that cannot run it ("HW-specific datatypes" in its error) ...
UNSUPPORTED_TYPES: dict[str, tuple[str, ...]] = {
    "BF16": ("sm75",),
    "INT4": ("sm75",),
    "FP8": ("sm75", "sm80", "sm86"),
    "FP4": ("sm75", "sm80", "sm86", "sm89"),
}
# ... and the targets that cannot run a matrix multiplication of FLOAT (fp32) tensors
# ("FP32 GEMM is not supported" for Turing); fp16 matrix multiplication and fp32 convolution build.
UNSUPPORTED_FLOAT_MATRIX_MULTIPLY: tuple[str, ...] = ("sm75",)


def _requested(declared: tuple[str, ...] | None = None) -> list[str]:
    if declared is not None:
        for entry in declared:
            if entry not in KNOWN_TARGETS and entry != _CURRENT:
                raise ValueError(
                    f"BuilderSettings.targets holds {entry!r}, which TensorRT-RTX cannot target; "
                    f"use {', '.join(KNOWN_TARGETS)}, or {_CURRENT!r} alone"
                )
        return sorted_targets(declared)
    text = os.environ.get(TARGETS_VARIABLE, "").strip()
    if not text:
        return list(DEFAULT_TARGETS)
    entries = [entry.strip().lower() for entry in text.split(",")]
    if entries == [_CURRENT]:
        return entries
    for entry in entries:
        if entry not in KNOWN_TARGETS:
            raise ValueError(
                f"{TARGETS_VARIABLE}={text!r}: {entry!r} is not a TensorRT-RTX target; use "
                f"{', '.join(KNOWN_TARGETS)} (comma-separated) or {_CURRENT!r} alone"
            )
    repeated = sorted({entry for entry in entries if entries.count(entry) > 1})
    if repeated:
        raise ValueError(
            f"{TARGETS_VARIABLE}={text!r} names {', '.join(map(repr, repeated))} twice; name "
            "each target once"
        )
    return sorted_targets(entries)


def planned_targets(
    gpu: Mapping[str, Any] | None, declared: tuple[str, ...] | None = None
) -> list[str]:
    """The compute capabilities the build will target, known before building (for the identity).

    ``declared`` (``BuilderSettings.targets``) wins over the environment variable."""
    requested = _requested(declared)
    if requested == [_CURRENT]:
        if gpu is None:
            setting = (
                f"{TARGETS_VARIABLE}=current"
                if declared is None
                else "BuilderSettings.targets=('current',)"
            )
            raise ValueError(f"{setting} builds for the local GPU, and this machine has none")
        major, minor = str(gpu["compute_capability"]).split(".")
        return [f"sm{major}{minor}"]
    return requested


def apply_targets(
    trt: Any, config: Any, targets: list[str], declared: tuple[str, ...] | None = None
) -> list[str]:
    """Sets the targets on the builder config and returns them as read back from it."""
    values = (
        [trt.ComputeCapability.CURRENT]
        if _requested(declared) == [_CURRENT]
        else [getattr(trt.ComputeCapability, target.upper()) for target in targets]
    )
    config.num_compute_capabilities = len(values)
    for index, value in enumerate(values):
        config.set_compute_capability(value, index)
    read_back = [
        config.get_compute_capability(index) for index in range(config.num_compute_capabilities)
    ]
    if read_back != values:
        raise RuntimeError(f"TensorRT-RTX kept compute capabilities {read_back}, not {values}")
    if values == [trt.ComputeCapability.CURRENT]:
        return list(targets)
    return [value.name.lower() for value in read_back]


def apply_hardware_compatibility(trt: Any, config: Any, level: str | None) -> None:
    """TensorRT-RTX engines run on every GPU of their targets: a level is refused."""
    del trt, config
    check_hardware_compatibility(level)


def check_hardware_compatibility(level: str | None) -> None:
    """Refuses a level before the graph is called (the open protocol checks it first)."""
    if level is not None:
        raise ValueError(
            f"BuilderSettings.hardware_compatibility={level!r} is a TensorRT 11 setting; a "
            "TensorRT-RTX engine runs on every GPU of its targets: declare "
            "BuilderSettings.targets instead"
        )


def check_built_hardware_compatibility(
    trt: Any, runtime: Any, plan: Any, level: str | None
) -> None:
    """Nothing to read back: TensorRT-RTX takes no level (``apply_hardware_compatibility``)."""
    del trt, runtime, plan, level


# Runtime.get_engine_validity judges a plan from its header, without deserializing it ...
HEADER_VALIDITY = True
# ... and these of its diagnostics mean the file itself is unusable, not this device.
DAMAGE_DIAGNOSTICS = ("MALFORMED_ENGINE", "VERSION_MISMATCH")


def target_remedy(local: str) -> str:
    """What to change when the targets leave out this machine's GPU (``local``, e.g. sm89)."""
    if local in KNOWN_TARGETS:
        return (
            f"Add {local!r} to BuilderSettings.targets (or to {TARGETS_VARIABLE} when the "
            "declaration gives none), or build for other GPUs with prepare_engine, which does "
            "not run the engine"
        )
    return (
        f"TensorRT-RTX cannot build for {local} at all (its targets are "
        f"{', '.join(KNOWN_TARGETS)}): use the tensorrt backend (TensorRT 11) on this GPU, or "
        "build for other GPUs with prepare_engine, which does not run the engine"
    )


def validity_problem(trt: Any, runtime: Any, plan: Any) -> str | None:
    """Reads the plan header with Runtime.get_engine_validity; returns why it cannot run here."""
    validity, diagnostics = runtime.get_engine_validity(plan)
    if validity == trt.EngineValidity.INVALID:
        reasons = [
            name
            for name, flag in trt.EngineInvalidityDiagnostics.__members__.items()
            if int(diagnostics) & int(flag)
        ]
        return f"INVALID ({', '.join(reasons) or 'no diagnostic bits set'})"
    return None

"""Which GPUs a saved engine can run on: what its identity records of the hardware, and the rule
that matches an entry's conditions against a device description.

An engine's identity records only what decides where it runs, so that every machine that can
run an engine computes the same identity for the same declaration:

- TensorRT-RTX compiles ahead of time for a list of compute capabilities and specialises at run
  time: ``"gpu": null`` and ``"targets"``, the targets set on the builder. A CI machine without a
  GPU and a workstation with an RTX 4090 compute the same identity for targets sm86, sm89, sm120.
- TensorRT 11 builds for the GPU in use. Without a hardware compatibility level the engine runs
  on GPUs with exactly the built GPU's properties: ``"gpu"`` holds them all. With
  ``BuilderSettings(hardware_compatibility="same_compute_capability")`` it runs on every GPU of
  the same compute capability: ``"gpu": {"compute_capability": "8.9"}``. With ``"ampere_plus"``
  it runs on every GPU from Ampere (sm80) on: ``"gpu": null``. The level is recorded as
  ``"hardware_compatibility"`` (absent when none is set, so older entries keep their identity).

``cannot_run`` is a pure function of (entry conditions, device description), implemented once in
the C++ core: tests call it with described devices, and ``open_engine`` calls it with the local
GPU before building or reading.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tensoracle import _core
from tensoracle.engine.declaration import (
    AMPERE_PLUS,
    HARDWARE_COMPATIBILITY_LEVELS,
    sorted_targets,
)

RTX = "tensorrt_rtx"


def target_of(device: Mapping[str, Any]) -> str:
    """A device's compute capability as a build target: ``"8.9"`` → ``"sm89"``.

    ValueError naming the value when it is not written ``MAJOR.MINOR``."""
    return _core.device_target(dict(device))


def hardware(
    backend: str,
    device: Mapping[str, Any] | None,
    targets: list[str],
    level: str | None,
) -> dict[str, Any]:
    """The identity's hardware keys for a build by ``backend`` on ``device`` (None without a
    GPU) for ``targets`` with the hardware compatibility ``level`` (None for none): ``gpu`` and
    ``targets``, plus ``hardware_compatibility`` when a level is set. The targets are recorded
    sorted by compute capability (``sorted_targets``): one set, one identity, in any order."""
    if backend == RTX:
        return {"gpu": None, "targets": sorted_targets(targets)}
    if level is None:
        gpu = dict(device) if device is not None else None
        return {"gpu": gpu, "targets": sorted_targets(targets)}
    if level not in HARDWARE_COMPATIBILITY_LEVELS:
        raise ValueError(
            f"BuilderSettings.hardware_compatibility={level!r}; use None, "
            + " or ".join(repr(known) for known in HARDWARE_COMPATIBILITY_LEVELS)
        )
    if level == AMPERE_PLUS:
        return {"gpu": None, "targets": [], "hardware_compatibility": level}
    if device is None:
        return {"gpu": None, "targets": [], "hardware_compatibility": level}
    return {
        "gpu": {"compute_capability": str(device["compute_capability"])},
        "targets": [target_of(device)],
        "hardware_compatibility": level,
    }


def cannot_run(conditions: Mapping[str, Any], device: Mapping[str, Any]) -> str | None:
    """Why an engine with these identity conditions cannot run on ``device`` (a GPU description
    as ``tensoracle.gpu.properties()`` returns it), or None when it can.

    The rule is the core's (``tensoracle/deploy/selection.hpp``), which C++ applications
    selecting a deployed engine apply too. Entries saved before identities were portable are
    judged by what their header records: an RTX entry by its targets (its ``gpu`` is ignored), a
    TensorRT entry by its GPU properties. ValueError naming a mistyped condition or property."""
    return _core.cannot_run(dict(conditions), dict(device))

"""The build conditions that identify a saved engine, as canonical JSON for the store, and the
limit on their size: the JSON of one engine's conditions is at most ``MAX_CONDITIONS_BYTES``."""

from __future__ import annotations

import json
import platform
from collections.abc import Mapping
from typing import Any

from tensoracle.cache import compatibility
from tensoracle.engine.backends import Backend
from tensoracle.engine.declaration import EngineBuild

MAX_CONDITIONS_BYTES = 1024 * 1024
_ARCHITECTURES = {"amd64": "x86_64", "x86_64": "x86_64", "arm64": "aarch64", "aarch64": "aarch64"}


def operating_system() -> str:
    return platform.system().lower() or "unknown"


def architecture() -> str:
    machine = platform.machine().lower()
    return _ARCHITECTURES.get(machine, machine or "unknown")


def conditions(
    *,
    name: str,
    graph_version: str,
    chosen: Backend,
    declaration: EngineBuild,
    weights: list[str],
    plugins: list[str],
    gpu: Mapping[str, Any] | None,
    targets: list[str],
) -> dict[str, Any]:
    """Everything that decides whether a saved engine fits this build: names, versions, input
    profiles, the settings that change the plan (not the workspace limit), content digests of
    weights and plugins, the platform, and what the engine can run on: the build targets and
    as much of the GPU as the backend and hardware compatibility level depend on
    (``tensoracle.cache.compatibility``)."""
    runs_on = compatibility.hardware(
        chosen.name, gpu, targets, declaration.settings.hardware_compatibility
    )
    return {
        "name": name,
        "graph_version": graph_version,
        "backend": chosen.name,
        "backend_version": chosen.version,
        "inputs": {key: shape.conditions() for key, shape in declaration.inputs.items()},
        "optimization_level": declaration.settings.optimization_level,
        "tf32": False,
        "weights": list(weights),
        "plugins": list(plugins),
        "os": operating_system(),
        "arch": architecture(),
        **runs_on,
    }


def to_json(value: Mapping[str, Any]) -> str:
    """Compact JSON with sorted keys; the store canonicalizes it again (floats are refused)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def check_conditions_size(text: str, conditions: Mapping[str, Any]) -> None:
    """Refuses identity conditions whose JSON ``text`` exceeds MAX_CONDITIONS_BYTES, naming the
    largest member (the weights or plugins list of a huge model, say)."""
    size = len(text.encode("utf-8"))
    if size <= MAX_CONDITIONS_BYTES:
        return
    largest = max(conditions, key=lambda key: len(to_json({key: conditions[key]})))
    raise ValueError(
        f"the engine's identity conditions take {size} bytes as JSON, beyond the limit of "
        f"{MAX_CONDITIONS_BYTES} bytes; the largest is {largest!r}"
    )

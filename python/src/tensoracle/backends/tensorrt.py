"""Adapter for TensorRT 11 (module ``tensorrt``): what differs from TensorRT-RTX, nothing more."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

NAME = "tensorrt"
MODULE_NAME = "tensorrt"
EXTRA = "tensoracle[tensorrt]"
# builder_optimization_level accepts 0 (fastest build) to 5 (most tuning); 3 is the default.
OPTIMIZATION_LEVELS = range(0, 6)
# INetworkDefinition offers add_plugin_v3 (and the deprecated add_plugin_v2).
NETWORK_PLUGIN_LAYERS = True


def planned_targets(gpu: Mapping[str, Any] | None) -> list[str]:
    """TensorRT builds for the local GPU only: its compute capability, e.g. ``["sm89"]``.

    Without a GPU the list is empty; the build itself then fails with TensorRT's error.
    """
    if gpu is None:
        return []
    major, minor = str(gpu["compute_capability"]).split(".")
    return [f"sm{major}{minor}"]


def apply_targets(trt: Any, config: Any, targets: list[str]) -> list[str]:
    """TensorRT has no target setting: the engine is built for the device in use."""
    del trt, config
    return list(targets)


def validity_problem(trt: Any, runtime: Any, plan: Any) -> str | None:
    """TensorRT has no header-only validity check; deserialization reports problems itself."""
    del trt, runtime, plan
    return None

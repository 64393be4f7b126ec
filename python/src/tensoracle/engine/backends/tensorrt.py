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


# tensoracle checks no tensor type against targets before a TensorRT 11 build: TensorRT 11 could
# not be built with here, so no refusal was observed; its own build error is reported instead.
UNSUPPORTED_TYPES: dict[str, tuple[str, ...]] = {}
UNSUPPORTED_FLOAT_MATRIX_MULTIPLY: tuple[str, ...] = ()


def planned_targets(
    gpu: Mapping[str, Any] | None, declared: tuple[str, ...] | None = None
) -> list[str]:
    """TensorRT builds for the local GPU only: its compute capability, e.g. ``["sm89"]``.

    Without a GPU the list is empty; the build itself then fails with TensorRT's error. Declared
    targets (``BuilderSettings.targets``) must be ``("current",)`` or the local GPU's own.
    """
    if gpu is None:
        if declared is not None:
            raise ValueError(
                f"BuilderSettings.targets={declared!r}: TensorRT 11 builds only for the local "
                "GPU, and this machine has none"
            )
        return []
    major, minor = str(gpu["compute_capability"]).split(".")
    local = [f"sm{major}{minor}"]
    if declared is not None and list(declared) not in (["current"], local):
        raise ValueError(
            f"BuilderSettings.targets={declared!r}: TensorRT 11 builds only for the local GPU "
            f"({local[0]}); declare ('current',) or {tuple(local)!r}, or use the tensorrt_rtx "
            "backend to build for other targets"
        )
    return local


def apply_targets(
    trt: Any, config: Any, targets: list[str], declared: tuple[str, ...] | None = None
) -> list[str]:
    """TensorRT has no target setting: the engine is built for the device in use."""
    del trt, config, declared
    return list(targets)


def validity_problem(trt: Any, runtime: Any, plan: Any) -> str | None:
    """TensorRT has no header-only validity check; deserialization reports problems itself."""
    del trt, runtime, plan
    return None

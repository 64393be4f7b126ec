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


# BuilderSettings.hardware_compatibility → the name of TensorRT's HardwareCompatibilityLevel member.
_LEVELS = {
    None: "NONE",
    "ampere_plus": "AMPERE_PLUS",
    "same_compute_capability": "SAME_COMPUTE_CAPABILITY",
}


def check_hardware_compatibility(level: str | None) -> None:
    """Every level of BuilderSettings.hardware_compatibility is TensorRT's: nothing to refuse."""
    del level


def apply_hardware_compatibility(trt: Any, config: Any, level: str | None) -> None:
    """Sets ``config.hardware_compatibility_level`` (IBuilderConfig::setHardwareCompatibilityLevel)
    and checks it reads back; None leaves TensorRT's default, HardwareCompatibilityLevel.NONE."""
    if level is None:
        return
    wanted = getattr(trt.HardwareCompatibilityLevel, _LEVELS[level])
    config.hardware_compatibility_level = wanted
    if config.hardware_compatibility_level != wanted:
        raise RuntimeError(
            f"TensorRT kept hardware compatibility level {config.hardware_compatibility_level}, "
            f"not {wanted} (BuilderSettings.hardware_compatibility={level!r})"
        )


def check_built_hardware_compatibility(
    trt: Any, runtime: Any, plan: Any, level: str | None
) -> None:
    """Reads the level back from the built engine (ICudaEngine::getHardwareCompatibilityLevel,
    after deserializing the plan on the GPU it was built on) and raises RuntimeError when it is
    not the one declared, so that nothing is saved under an identity it does not meet."""
    if level is None:
        return
    wanted = getattr(trt.HardwareCompatibilityLevel, _LEVELS[level])
    engine = runtime.deserialize_cuda_engine(plan)
    if engine is None:
        raise RuntimeError(
            "TensorRT built an engine it cannot deserialize on the GPU it was built on, so its "
            f"hardware compatibility level (declared {level!r}) cannot be read back"
        )
    built = engine.hardware_compatibility_level
    del engine
    if built != wanted:
        raise RuntimeError(
            f"TensorRT built the engine with hardware compatibility level {built}, not {wanted} "
            f"(BuilderSettings.hardware_compatibility={level!r})"
        )


# TensorRT has no header-only validity check (validity_problem), so no damage diagnostics.
HEADER_VALIDITY = False
DAMAGE_DIAGNOSTICS: tuple[str, ...] = ()


def target_remedy(local: str) -> str:
    """What to change when the hardware compatibility level leaves out this GPU (``local``)."""
    return (
        f"Build on a GPU the level covers, choose another BuilderSettings.hardware_compatibility "
        f"for this {local} GPU, or leave it None to build for this GPU alone"
    )


def validity_problem(trt: Any, runtime: Any, plan: Any) -> str | None:
    """TensorRT has no header-only validity check; deserialization reports problems itself."""
    del trt, runtime, plan
    return None

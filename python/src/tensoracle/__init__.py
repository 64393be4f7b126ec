"""tensoracle: build, save, reuse and execute TensorRT engines from safetensors weights.

This module only re-exports the public API; each name lives in the module of its concept.
The cubin producer (``tensoracle.producer``) is imported explicitly: it needs Triton.
"""

from tensoracle.bundle import BundleReport, CubinReport, inspect_bundle, inspect_wheel
from tensoracle.errors import (
    BundleAbiError,
    BundleError,
    CorruptCubinError,
    CorruptEngineError,
    EngineCacheError,
    EngineConditionError,
    EngineIOError,
    FalseSmClaimError,
    MissingCubinError,
    PluginBundleMismatchError,
    PluginLibraryError,
    ProducerToolError,
    ShapeTensorOutputWarning,
)

__all__ = [
    "BundleAbiError",
    "BundleError",
    "BundleReport",
    "CorruptCubinError",
    "CorruptEngineError",
    "CubinReport",
    "EngineCacheError",
    "EngineConditionError",
    "EngineIOError",
    "FalseSmClaimError",
    "MissingCubinError",
    "PluginBundleMismatchError",
    "PluginLibraryError",
    "ProducerToolError",
    "ShapeTensorOutputWarning",
    "inspect_bundle",
    "inspect_wheel",
]

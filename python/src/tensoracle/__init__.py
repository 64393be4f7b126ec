"""tensoracle: build, save, reuse and execute TensorRT engines from safetensors weights.

This module only re-exports the public API; each name lives in the module of its concept.
"""

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
    "CorruptCubinError",
    "CorruptEngineError",
    "EngineCacheError",
    "EngineConditionError",
    "EngineIOError",
    "FalseSmClaimError",
    "MissingCubinError",
    "PluginBundleMismatchError",
    "PluginLibraryError",
    "ProducerToolError",
    "ShapeTensorOutputWarning",
]

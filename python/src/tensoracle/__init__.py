"""tensoracle: build, save, reuse and execute TensorRT engines from safetensors weights.

This module only re-exports the public API; each name lives in the module of its concept.
"""

from tensoracle.errors import (
    CorruptEngineError,
    EngineCacheError,
    EngineConditionError,
    EngineIOError,
    PluginLibraryError,
    ShapeTensorOutputWarning,
)
from tensoracle.execution import EngineExecution

__all__ = [
    "CorruptEngineError",
    "EngineCacheError",
    "EngineConditionError",
    "EngineExecution",
    "EngineIOError",
    "PluginLibraryError",
    "ShapeTensorOutputWarning",
]

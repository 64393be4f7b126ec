"""tensoracle: build, save, reuse and execute TensorRT engines from safetensors weights.

This module only re-exports the public API; each name lives in the module of its concept.
"""

from tensoracle.compare import ErrorStatistics, OutputComparison, compare_outputs
from tensoracle.errors import (
    CorruptEngineError,
    EngineCacheError,
    EngineConditionError,
    EngineIOError,
    PluginLibraryError,
    ShapeTensorOutputWarning,
)

__all__ = [
    "CorruptEngineError",
    "EngineCacheError",
    "EngineConditionError",
    "EngineIOError",
    "ErrorStatistics",
    "OutputComparison",
    "PluginLibraryError",
    "ShapeTensorOutputWarning",
    "compare_outputs",
]

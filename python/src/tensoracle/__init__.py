"""tensoracle: build, save, reuse and execute TensorRT engines from safetensors weights.

This module only re-exports the public API; each name lives in the module of its concept.
"""

from tensoracle import gpu
from tensoracle.backends import Backend, backend
from tensoracle.build import build_serialized_engine
from tensoracle.compare import ErrorStatistics, OutputComparison, compare_outputs
from tensoracle.declaration import BuilderSettings, EngineBuild, InputShape
from tensoracle.engine import EngineHandle, PreparedEngine, open_engine, prepare_engine
from tensoracle.errors import (
    CorruptEngineError,
    EngineCacheError,
    EngineConditionError,
    EngineIOError,
    PluginLibraryError,
    ShapeTensorOutputWarning,
)
from tensoracle.execution import EngineExecution
from tensoracle.io import EngineIO, TensorSpec

__all__ = [
    "Backend",
    "BuilderSettings",
    "CorruptEngineError",
    "EngineBuild",
    "EngineCacheError",
    "EngineConditionError",
    "EngineExecution",
    "EngineHandle",
    "EngineIO",
    "EngineIOError",
    "ErrorStatistics",
    "InputShape",
    "OutputComparison",
    "PluginLibraryError",
    "PreparedEngine",
    "ShapeTensorOutputWarning",
    "TensorSpec",
    "backend",
    "build_serialized_engine",
    "compare_outputs",
    "gpu",
    "open_engine",
    "prepare_engine",
]

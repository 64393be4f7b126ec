"""tensoracle: build, save, reuse and execute TensorRT engines from safetensors weights.

This module only re-exports the public API; each name lives in the module of its concept.
The cubin producer (``tensoracle.producer``) is imported explicitly: it needs Triton.
"""

from tensoracle import gpu
from tensoracle.backends import Backend, backend
from tensoracle.build import build_serialized_engine
from tensoracle.bundle import BundleReport, CubinReport, inspect_bundle, inspect_wheel
from tensoracle.compare import ErrorStatistics, OutputComparison, compare_outputs
from tensoracle.declaration import BuilderSettings, EngineBuild, InputShape
from tensoracle.engine import EngineHandle, PreparedEngine, open_engine, prepare_engine
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
    RemoteCacheWarning,
    ShapeTensorOutputWarning,
    UntrustedEngineError,
)
from tensoracle.execution import EngineExecution
from tensoracle.io import EngineIO, TensorSpec

__all__ = [
    "Backend",
    "BuilderSettings",
    "BundleAbiError",
    "BundleError",
    "BundleReport",
    "CorruptCubinError",
    "CorruptEngineError",
    "CubinReport",
    "EngineBuild",
    "EngineCacheError",
    "EngineConditionError",
    "EngineExecution",
    "EngineHandle",
    "EngineIO",
    "EngineIOError",
    "ErrorStatistics",
    "FalseSmClaimError",
    "InputShape",
    "MissingCubinError",
    "OutputComparison",
    "PluginBundleMismatchError",
    "PluginLibraryError",
    "PreparedEngine",
    "ProducerToolError",
    "RemoteCacheWarning",
    "ShapeTensorOutputWarning",
    "TensorSpec",
    "UntrustedEngineError",
    "backend",
    "build_serialized_engine",
    "compare_outputs",
    "gpu",
    "inspect_bundle",
    "inspect_wheel",
    "open_engine",
    "prepare_engine",
]

"""tensoracle: build, save, reuse and execute TensorRT engines from safetensors weights.

This module only re-exports the public API; each name lives in the module of its concept.
The cubin producer (``tensoracle.producer``) is imported explicitly: it needs Triton.
"""

from tensoracle import gpu
from tensoracle.backends import Backend, backend
from tensoracle.build import build_serialized_engine
from tensoracle.bundle import inspect_bundle, inspect_wheel
from tensoracle.compare import ErrorStatistics, OutputComparison, compare_outputs
from tensoracle.comparison_report import write_comparison_report
from tensoracle.declaration import BuilderSettings, EngineBuild, InputShape
from tensoracle.dtypes import numpy_dtype, tensor_nbytes
from tensoracle.engine import EngineHandle, PreparedEngine, open_engine, prepare_engine
from tensoracle.errors import (
    BuildCancelledError,
    BundleAbiError,
    BundleError,
    CorruptCubinError,
    CorruptEngineError,
    CubinArchitectureError,
    EngineCacheError,
    EngineConditionError,
    EngineIOError,
    FalseSmClaimError,
    KernelCompileError,
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
from tensoracle.progress import ProgressEvent

__all__ = [
    "Backend",
    "BuildCancelledError",
    "BuilderSettings",
    "BundleAbiError",
    "BundleError",
    "CorruptCubinError",
    "CorruptEngineError",
    "CubinArchitectureError",
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
    "KernelCompileError",
    "MissingCubinError",
    "OutputComparison",
    "PluginBundleMismatchError",
    "PluginLibraryError",
    "PreparedEngine",
    "ProducerToolError",
    "ProgressEvent",
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
    "numpy_dtype",
    "open_engine",
    "prepare_engine",
    "tensor_nbytes",
    "write_comparison_report",
]

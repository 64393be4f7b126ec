"""tensoracle: build, save, reuse and execute TensorRT engines from safetensors weights.

This module only re-exports the public API; each name lives in the module of its part:
``engine`` (declaring, building and opening engines), ``cache`` (the open protocol, the identity
of a saved engine, the remote tier), ``execution`` (running an engine), ``compare`` (comparing
outputs), ``bundle`` (reading cubin bundles), ``producer`` (compiling them; imported explicitly:
it needs Triton), ``cli`` and ``convert``. The public classes name ``tensoracle`` as their module,
so that pickles and reprs do not depend on that internal layout.
"""

import inspect as _inspect
import typing as _typing

from tensoracle import gpu
from tensoracle.bundle import inspect_bundle, inspect_wheel
from tensoracle.compare.measure import ErrorStatistics, OutputComparison, compare_outputs
from tensoracle.compare.report import write_comparison_report
from tensoracle.engine.backends import Backend, backend
from tensoracle.engine.build import build_serialized_engine
from tensoracle.engine.declaration import BuilderSettings, EngineBuild, InputShape
from tensoracle.engine.deployed import DeployedEngineHandle, open_deployed
from tensoracle.engine.handle import EngineHandle
from tensoracle.engine.io import EngineIO, TensorSpec
from tensoracle.engine.open import PreparedEngine, open_engine, prepare_engine
from tensoracle.engine.progress import ProgressEvent
from tensoracle.engine.recipe import EngineRecipe
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
    EngineKeyError,
    EngineTargetError,
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
from tensoracle.execution.dtypes import numpy_dtype, tensor_nbytes
from tensoracle.execution.unit import EngineExecution

__all__ = [
    "Backend",
    "BuildCancelledError",
    "BuilderSettings",
    "BundleAbiError",
    "BundleError",
    "CorruptCubinError",
    "CorruptEngineError",
    "CubinArchitectureError",
    "DeployedEngineHandle",
    "EngineBuild",
    "EngineCacheError",
    "EngineConditionError",
    "EngineExecution",
    "EngineHandle",
    "EngineIO",
    "EngineIOError",
    "EngineKeyError",
    "EngineRecipe",
    "EngineTargetError",
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
    "open_deployed",
    "open_engine",
    "prepare_engine",
    "tensor_nbytes",
    "write_comparison_report",
]


def _name_as_public(value: type) -> None:
    """Moves a public class to ``tensoracle`` for pickle and repr, with its own annotations
    resolved first in its defining module (``typing.get_type_hints`` looks names up in the
    module named by ``__module__``, which does not hold the private names they use)."""
    own = _inspect.get_annotations(value)
    if own:
        hints = _typing.get_type_hints(value)
        value.__annotations__ = {name: hints[name] for name in own}
    value.__module__ = __name__


for _name in __all__:
    _value = globals()[_name]
    if isinstance(_value, type):
        _name_as_public(_value)
del _name, _value

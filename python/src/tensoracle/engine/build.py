"""Building a serialized engine (plan) from a graph function and its declaration."""

from __future__ import annotations

import contextlib
import os
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from tensoracle import gpu
from tensoracle.engine import log
from tensoracle.engine import progress as build_progress
from tensoracle.engine.backends import Backend, backend
from tensoracle.engine.declaration import EngineBuild
from tensoracle.engine.io import Signature, signature_from_network
from tensoracle.engine.memory import release_freed_heap
from tensoracle.engine.plugins import load_plugins
from tensoracle.engine.target_support import check_target_support
from tensoracle.errors import ShapeTensorOutputWarning, caller_stacklevel, shape_output_message

Graph = Callable[[Any], None]


@dataclass(frozen=True)
class BuildResult:
    """A plan with what the build learned about it (recorded in the saved header)."""

    plan: Any  # the backend's IHostMemory: a read-only buffer, not copied
    signature: Signature
    shape_tensor_outputs: list[str]
    targets: list[str]
    milliseconds: int


def check_arguments(graph: Any, declaration: Any, progress: Any = None) -> build_progress.Mode:
    """Checks the arguments every build takes; returns ``progress`` resolved to its mode."""
    mode = build_progress.resolve_mode(progress)
    if not callable(graph):
        raise ValueError(f"graph must be a function taking the network definition, not {graph!r}")
    if not isinstance(declaration, EngineBuild):
        raise ValueError(f"declaration must be an EngineBuild, not {declaration!r}")
    return mode


def _check_inputs(network: Any, declaration: EngineBuild) -> None:
    graph_inputs = [network.get_input(index) for index in range(network.num_inputs)]
    names = [tensor.name for tensor in graph_inputs]
    for name in declaration.inputs:
        if name not in names:
            raise ValueError(
                f"EngineBuild.inputs[{name!r}] names no graph input; the graph's inputs are {names}"
            )
    for tensor in graph_inputs:
        declared = declaration.inputs.get(tensor.name)
        if declared is None:
            raise ValueError(
                f"graph input {tensor.name!r} has no entry in EngineBuild.inputs "
                f"(declared: {sorted(declaration.inputs)})"
            )
        dims = [int(dim) for dim in tensor.shape]
        if len(dims) != len(declared.minimum):
            raise ValueError(
                f"EngineBuild.inputs[{tensor.name!r}] has rank {len(declared.minimum)} "
                f"(minimum={declared.minimum}), but the graph input has shape {tuple(dims)}"
            )
        for axis, dim in enumerate(dims):
            if dim == -1:
                continue
            for field in ("minimum", "optimum", "maximum"):
                value = getattr(declared, field)
                if value[axis] != dim:
                    raise ValueError(
                        f"EngineBuild.inputs[{tensor.name!r}].{field}={value} differs from the "
                        f"graph input's fixed dimension {axis} (size {dim}, shape {tuple(dims)})"
                    )


def _configure(
    chosen: Backend, builder: Any, network: Any, declaration: EngineBuild, targets: list[str]
) -> tuple[Any, list[str]]:
    trt = chosen.module
    settings = declaration.settings
    config = builder.create_builder_config()
    # TF32 is enabled by default on both backends; it is always cleared and verified.
    config.clear_flag(trt.BuilderFlag.TF32)
    if config.get_flag(trt.BuilderFlag.TF32):
        raise RuntimeError(f"{chosen.name} kept BuilderFlag.TF32 set after clearing it")
    if settings.optimization_level not in chosen.adapter.OPTIMIZATION_LEVELS:
        raise ValueError(
            f"BuilderSettings.optimization_level={settings.optimization_level} is outside "
            f"{chosen.name}'s range {chosen.adapter.OPTIMIZATION_LEVELS}"
        )
    config.builder_optimization_level = settings.optimization_level
    if config.builder_optimization_level != settings.optimization_level:
        raise RuntimeError(
            f"{chosen.name} kept optimization level {config.builder_optimization_level}, "
            f"not {settings.optimization_level}"
        )
    if settings.workspace_limit is not None:
        config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, settings.workspace_limit)
    chosen.adapter.apply_hardware_compatibility(trt, config, settings.hardware_compatibility)
    applied = chosen.adapter.apply_targets(trt, config, targets, settings.targets)
    profile = builder.create_optimization_profile()
    for name, shape in declaration.inputs.items():
        profile.set_shape(name, shape.minimum, shape.optimum, shape.maximum)
    config.add_optimization_profile(profile)
    return config, applied


def build_plan(
    chosen: Backend,
    graph: Graph,
    declaration: EngineBuild,
    targets: list[str],
    logger: Any = None,
    progress: build_progress.Mode = "off",
) -> BuildResult:
    """Calls ``graph`` on a fresh network, checks its inputs against the declaration and builds
    for ``targets`` (planned by the caller), reporting progress in the resolved ``progress`` mode.

    Raises ValueError for declarations that do not fit the graph and RuntimeError, with the
    backend's logged errors, when the backend cannot build the network. Whatever the outcome,
    the builder's objects are dropped and the heap they freed is given back to the operating
    system (``tensoracle.memory``)."""
    try:
        return _build_plan(chosen, graph, declaration, targets, logger, progress)
    except BaseException as error:
        # The traceback keeps the frames' locals (builder, network, config) alive: clear those
        # of tensoracle's own frames, so that their memory is freed now rather than when the
        # caller drops the exception. The caller's frames (the graph function's) keep theirs.
        _clear_own_frames(error.__traceback__)
        raise
    finally:
        release_freed_heap()


def _clear_own_frames(trace: TracebackType | None) -> None:
    # The tensoracle package's folder (this module is in tensoracle/engine/).
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    while trace is not None:
        frame = trace.tb_frame
        if frame.f_code.co_filename.startswith(package):
            with contextlib.suppress(RuntimeError):  # a running frame (build_plan's) cannot be
                frame.clear()
        trace = trace.tb_next


def _build_plan(
    chosen: Backend,
    graph: Graph,
    declaration: EngineBuild,
    targets: list[str],
    logger: Any,
    progress: build_progress.Mode,
) -> BuildResult:
    trt = chosen.module
    started = time.monotonic()
    with log.capture(logger) as errors:
        builder = trt.Builder(log.trt_logger(chosen))
        # Both backends are strongly typed only; their one creation flag is deprecated: pass 0.
        network = builder.create_network(0)
        graph(network)
        _check_inputs(network, declaration)
        check_target_support(chosen, network, targets, declaration.settings.targets)
        config, applied = _configure(chosen, builder, network, declaration, targets)
        plan = build_progress.build_serialized_network(chosen, builder, network, config, progress)
    if plan is None:
        raise RuntimeError(
            f"{chosen.name} {chosen.version} could not build the engine: {log.describe(errors)}"
        )
    level = declaration.settings.hardware_compatibility
    if level is not None:
        runtime = trt.Runtime(log.trt_logger(chosen))
        chosen.adapter.check_built_hardware_compatibility(trt, runtime, plan, level)
    outputs = [network.get_output(index) for index in range(network.num_outputs)]
    shape_outputs = [tensor.name for tensor in outputs if tensor.is_shape_tensor]
    if shape_outputs:
        warnings.warn(
            ShapeTensorOutputWarning(shape_output_message(shape_outputs)),
            stacklevel=caller_stacklevel(),
        )
    return BuildResult(
        plan=plan,
        signature=signature_from_network(trt, network, declaration),
        shape_tensor_outputs=shape_outputs,
        targets=applied,
        milliseconds=int((time.monotonic() - started) * 1000),
    )


def build_serialized_engine(
    graph: Graph,
    declaration: EngineBuild,
    *,
    plugins: Iterable[Any] = (),
    logger: Any = None,
    progress: Any = None,
) -> bytes:
    """Builds the graph with the declared input shapes and settings; returns the plan bytes.

    Invalid declarations raise ValueError; a failed build raises RuntimeError carrying the
    backend's logged errors; plugin library problems raise PluginLibraryError. ``logger`` (a
    TensorRT ``ILogger``) receives the backend's messages; ``progress``: see ``open_engine``."""
    mode = check_arguments(graph, declaration, progress)
    chosen = backend()
    load_plugins(plugins, chosen, logger)
    targets = chosen.adapter.planned_targets(gpu.properties(), declaration.settings.targets)
    plan = build_plan(chosen, graph, declaration, targets, logger=logger, progress=mode).plan
    return bytes(plan)

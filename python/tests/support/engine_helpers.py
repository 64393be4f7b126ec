"""Shared pieces of the engine-layer tests: the spec's features/result graph and its weights."""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from backend_requirement import backend_module
from safetensors.numpy import load_file, save_file

import tensoracle
from tensoracle import BuilderSettings, EngineBuild, EngineIO, InputShape, TensorSpec
from tensoracle.cache.compatibility import target_of
from tensoracle.engine.log import trt_logger

# Where neither backend imports, every module using this fails (skips under --without-backend).
trt: Any = backend_module()

DECLARATION = EngineBuild(
    inputs={"features": InputShape.ranged((1, 1, 2), (1, 64, 2), (1, 448, 2))},
    settings=BuilderSettings(workspace_limit=None, optimization_level=3),
)
IO = EngineIO(
    inputs={"features": TensorSpec(trt.float32, (1, -1, 2))},
    outputs={"result": TensorSpec(trt.float32, (1, -1, 2))},
)


def write_weights(path: Path, bias: tuple[float, float] = (0.5, -1.0)) -> Path:
    """A tiny safetensors file holding the graph's ``bias`` (2 floats)."""
    save_file({"bias": np.array(bias, dtype=np.float32)}, str(path))
    return path


def make_graph(weights: Path, calls: list[int] | None = None) -> Callable[[Any], None]:
    """The features + bias = result graph; appends to ``calls`` each time it is called."""

    def graph(network: Any) -> None:
        if calls is not None:
            calls.append(1)
        bias = load_file(str(weights))["bias"]
        features = network.add_input("features", trt.float32, (1, -1, 2))
        constant = network.add_constant((1, 1, 2), np.ascontiguousarray(bias[None, None, :]))
        result = network.add_elementwise(
            features, constant.get_output(0), trt.ElementWiseOperation.SUM
        ).get_output(0)
        result.name = "result"
        network.mark_output(result)

    return graph


def raising_graph(network: Any) -> None:
    """A graph for cache hits: calling it means the cache was not used."""
    raise AssertionError("the graph was called although a saved engine should have been used")


@functools.cache
def refused_gpu_reason() -> str | None:
    """Why the selected backend refuses every engine on this machine's GPU, else None.

    None where no GPU is present (there open_engine returns a handle that refuses lazily) and
    where the backend accepts an engine built as open_engine builds it. TensorRT-RTX 1.7 cannot
    target the H200 (compute capability 9.0): there open_engine raises EngineTargetError before
    building; where the GPU is among the targets but the runtime still refuses the plan,
    open_engine saves the engine, then raises the RuntimeError that ends in "it cannot run on
    this device".
    """
    if tensoracle.gpu.absent_reason() is not None:
        return None
    chosen = tensoracle.backend()
    device = tensoracle.gpu.properties() or {}
    local = target_of(device)
    targets = chosen.adapter.planned_targets(device)
    if chosen.name == "tensorrt_rtx" and local not in targets:
        return (
            f"{chosen.name} {chosen.version} does not build for this GPU ({device.get('name')}, "
            f"{local}; the targets are {', '.join(targets)}), so open_engine raises "
            "EngineTargetError instead of returning a handle"
        )
    with tempfile.TemporaryDirectory() as folder:
        weights = write_weights(Path(folder) / "model.safetensors")
        plan = tensoracle.build_serialized_engine(make_graph(weights), DECLARATION)
    runtime = trt.Runtime(trt_logger(chosen))
    problem = chosen.adapter.validity_problem(trt, runtime, plan)
    if problem is None:
        return None
    device = tensoracle.gpu.properties() or {}
    return (
        f"{chosen.name} {chosen.version} refuses engines on this GPU ({device.get('name')}, "
        f"compute capability {device.get('compute_capability')}): get_engine_validity says "
        f"{problem}, so open_engine saves the engine and then raises instead of returning a handle"
    )


def skip_where_the_gpu_is_refused() -> None:
    """Skips a test that needs a handle from open_engine where the backend refuses this GPU."""
    reason = refused_gpu_reason()
    if reason is not None:
        pytest.skip(reason)

"""Small real engines for the GPU tests, built and deserialized with the selected backend.

Each engine is built with the backend's own builder and deserialized by its runtime on the
current GPU; nothing here stands in for TensorRT. When the backend cannot run engines on this
GPU at all (TensorRT-RTX on a compute capability it lacks, such as the H200's 9.0), the caller
skips with the runtime's own diagnosis.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tensoracle import EngineHandle


def backend_module() -> Any:
    from tensoracle.engine.backends import backend

    return backend().module


def logger(trt: Any) -> Any:
    """tensoracle's process-wide TensorRT logger for the selected backend.

    TensorRT keeps the first logger it is given, so the tests use the one open_engine uses.
    """
    from tensoracle.engine import log
    from tensoracle.engine.backends import backend

    chosen = backend()
    assert chosen.module is trt
    return log.trt_logger(chosen)


class BuildFailed(RuntimeError):
    """The backend could not build a test engine (its log messages are in the text)."""


Populate = Callable[[Any, Any], None]


def build_plan(
    populate: Populate,
    profile: dict[str, tuple[tuple[int, ...], ...]] | None = None,
    shape_values: dict[str, tuple[tuple[int, ...], ...]] | None = None,
) -> bytes:
    """Builds ``populate(trt, network)`` with one optimization profile; needs no GPU on RTX."""
    from tensoracle.engine import log

    trt = backend_module()
    builder = trt.Builder(logger(trt))
    network = builder.create_network(0)
    populate(trt, network)
    config = builder.create_builder_config()
    if profile or shape_values:
        optimization = builder.create_optimization_profile()
        for name, (low, optimum, high) in (profile or {}).items():
            optimization.set_shape(name, low, optimum, high)
        for name, (low, optimum, high) in (shape_values or {}).items():
            optimization.set_shape_input(name, low, optimum, high)
        config.add_optimization_profile(optimization)
    with log.capture() as errors:
        plan = builder.build_serialized_network(network, config)
    if plan is None:
        raise BuildFailed(f"{trt.__name__} {trt.__version__} did not build it: {errors}")
    return bytes(plan)


def open_plan(plan: bytes) -> EngineHandle:
    """Deserializes a plan on this GPU, skipping when the backend cannot run it here at all."""
    from tensoracle.engine import log

    trt = backend_module()
    runtime = trt.Runtime(logger(trt))
    skip_if_unsupported_here(trt, runtime, plan)
    with log.capture() as errors:
        engine = runtime.deserialize_cuda_engine(plan)
    assert engine is not None, f"the test engine did not deserialize: {errors}"
    # Wrapped as a user wraps an engine built elsewhere (the 1.x way): EngineHandle(e, r, path).
    return EngineHandle(engine, runtime, Path("built-in-memory.engine"))


def build_handle(
    populate: Populate,
    profile: dict[str, tuple[tuple[int, ...], ...]] | None = None,
    shape_values: dict[str, tuple[tuple[int, ...], ...]] | None = None,
) -> EngineHandle:
    """Builds a test engine and opens it on this GPU."""
    return open_plan(build_plan(populate, profile, shape_values))


def skip_if_unsupported_here(trt: Any, runtime: Any, plan: bytes) -> None:
    """Skips when the backend's runtime says no engine of this build can run on this GPU."""
    if not hasattr(runtime, "get_engine_validity"):
        return  # TensorRT 11 has no header check; deserialization reports problems itself
    validity, diagnostics = runtime.get_engine_validity(plan)
    if validity == trt.EngineValidity.INVALID:
        unsupported = int(trt.EngineInvalidityDiagnostics.UNSUPPORTED_CC)
        if int(diagnostics) & unsupported:
            pytest.skip(
                f"{trt.__name__} {trt.__version__} cannot run engines on this GPU "
                f"(get_engine_validity: INVALID, diagnostics UNSUPPORTED_CC, compute "
                f"capability {_compute_capability()})"
            )


def _compute_capability() -> str:
    from tensoracle import gpu

    try:
        described = gpu.properties()
    except RuntimeError as error:  # only decorates a skip reason; never turns it into an error
        return f"unknown ({error})"
    return "unknown" if described is None else str(described.get("compute_capability"))


def features_result(trt: Any, network: Any) -> None:
    """The README's graph: result = features + bias, features (1, -1, 2) float32."""
    features = network.add_input("features", trt.float32, (1, -1, 2))
    bias = np.array([[[0.5, -1.0]]], dtype=np.float32)
    constant = network.add_constant(bias.shape, bias).get_output(0)
    total = network.add_elementwise(features, constant, trt.ElementWiseOperation.SUM)
    total.get_output(0).name = "result"
    network.mark_output(total.get_output(0))


FEATURES_PROFILE = {"features": ((1, 1, 2), (1, 4, 2), (1, 8, 2))}
BIAS = np.array([[[0.5, -1.0]]], dtype=np.float32)


def two_inputs_sum(trt: Any, network: Any) -> None:
    """total = a + b over two ranged float32 vectors."""
    a = network.add_input("a", trt.float32, (-1,))
    b = network.add_input("b", trt.float32, (-1,))
    total = network.add_elementwise(a, b, trt.ElementWiseOperation.SUM)
    total.get_output(0).name = "total"
    network.mark_output(total.get_output(0))


TWO_INPUTS_PROFILE = {"a": ((1,), (4,), (8,)), "b": ((1,), (4,), (8,))}


def fixed_and_point(trt: Any, network: Any) -> None:
    """out = fixed * point, one fixed (2, 3) input and one (2, -1) single-point input."""
    fixed = network.add_input("fixed", trt.float32, (2, 3))
    point = network.add_input("point", trt.float32, (2, -1))
    product = network.add_elementwise(fixed, point, trt.ElementWiseOperation.PROD)
    product.get_output(0).name = "out"
    network.mark_output(product.get_output(0))


POINT_PROFILE = {"point": ((2, 3), (2, 3), (2, 3))}


def nonzero(trt: Any, network: Any) -> None:
    """indices of the nonzero entries: an output whose size depends on the data."""
    values = network.add_input("values", trt.float32, (8,))
    found = network.add_non_zero(values)
    found.get_output(0).name = "indices"
    network.mark_output(found.get_output(0))


def shape_input(trt: Any, network: Any) -> None:
    """reshaped = reshape(data, dims), where the values of ``dims`` set the output shape."""
    data = network.add_input("data", trt.float32, (6,))
    dims = network.add_input("dims", trt.int64, (2,))
    shuffle = network.add_shuffle(data)
    shuffle.set_input(1, dims)
    shuffle.get_output(0).name = "reshaped"
    network.mark_output(shuffle.get_output(0))


SHAPE_VALUES = {"dims": ((2, 3), (2, 3), (2, 3))}


def shape_output(trt: Any, network: Any) -> None:
    """size = shape(data), marked as an output: a shape-tensor output, plus a copy of data."""
    data = network.add_input("data", trt.float32, (-1, 3))
    size = network.add_shape(data).get_output(0)
    size.name = "size"
    network.mark_output(size)
    copy = network.add_identity(data).get_output(0)
    copy.name = "copy"
    network.mark_output(copy)


SHAPE_OUTPUT_PROFILE = {"data": ((1, 3), (2, 3), (4, 3))}


def vectorized_io(trt: Any, network: Any) -> None:
    """y = relu(x) in float16 with x allowed only CHW32 and y only HWC8 (padded IO formats)."""
    x = network.add_input("x", trt.float16, (1, 3, 8, 8))
    x.allowed_formats = 1 << int(trt.TensorFormat.CHW32)
    y = network.add_activation(x, trt.ActivationType.RELU).get_output(0)
    y.name = "y"
    network.mark_output(y)
    y.allowed_formats = 1 << int(trt.TensorFormat.HWC8)


def kv_cache(trt: Any, network: Any) -> None:
    """cache_out = cache with ``update`` written at ``write_indices``: an output TensorRT writes
    in place of its input ``cache`` (they must share one address)."""
    cache = network.add_input("cache", trt.float16, (1, 2, 16, 8))
    update = network.add_input("update", trt.float16, (1, 2, 1, 8))
    indices = network.add_input("write_indices", trt.int32, (1,))
    layer = network.add_kv_cache_update(cache, update, indices, trt.KVCacheMode.LINEAR)
    layer.get_output(0).name = "cache_out"
    network.mark_output(layer.get_output(0))


def shape_tensor_output(trt: Any, network: Any) -> None:
    """size = shape(data) marked with mark_output_for_shapes (a real shape-tensor output)."""
    data = network.add_input("data", trt.float32, (-1, 3))
    size = network.add_shape(data).get_output(0)
    size.name = "size"
    network.mark_output_for_shapes(size)
    copy = network.add_identity(data).get_output(0)
    copy.name = "copy"
    network.mark_output(copy)

"""Runs docs/execution.md's examples exactly as written, and CUDA-graph replay, on a real GPU."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from backend_requirement import rtx_module
from gpu_engines import BIAS, FEATURES_PROFILE, backend_module, build_handle, features_result

DOC = Path(__file__).resolve().parents[3] / "docs" / "execution.md"
EXPECTED = np.linspace(0.0, 1.75, 8, dtype=np.float32).reshape(1, 4, 2) + BIAS


def example(name: str) -> str:
    """The python block that follows ``<!-- example: NAME -->`` in docs/execution.md."""
    text = DOC.read_text(encoding="utf-8")
    found = re.search(rf"<!-- example: {re.escape(name)} -->\n```python\n(.*?)\n```", text, re.S)
    assert found is not None, f"docs/execution.md has no example {name!r}"
    return found.group(1)


def test_every_named_example_is_found():
    for name in ("cupy", "cuda-python", "cuda-graph"):
        assert "handle.create_execution()" in example(name)


def test_the_dtype_example_runs_without_a_gpu():
    pytest.importorskip("ml_dtypes")
    trt = rtx_module()
    namespace: dict = {"trt": trt, "__name__": "docs_example"}
    exec(compile(example("dtypes"), "docs/execution.md:dtypes", "exec"), namespace)
    assert namespace["sizes"] == {"FLOAT": 32, "BF16": 16, "INT4": 4}


def skip_capture_on_rtx() -> None:
    if backend_module().__name__ == "tensorrt_rtx":
        pytest.skip(
            "TensorRT-RTX refuses to record this ranged engine in a CUDA graph "
            "(test_execution_gpu.py::test_rtx_refuses_capture_with_the_reason checks the refusal)"
        )


@pytest.fixture(scope="module")
def handle(tmp_path_factory):
    """The features/result engine of the README, opened through open_engine."""
    from safetensors.numpy import save_file

    from tensoracle import (
        BuilderSettings,
        EngineBuild,
        EngineIO,
        InputShape,
        TensorSpec,
        open_engine,
    )

    build_handle(features_result, FEATURES_PROFILE)  # skips where the backend cannot run here
    trt = backend_module()
    folder = tmp_path_factory.mktemp("engine")
    weights = folder / "model.safetensors"
    save_file({"bias": BIAS.reshape(2)}, str(weights))

    def graph(network):
        features_result(trt, network)

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(folder / "cache"))
        (low, optimum, high) = FEATURES_PROFILE["features"]
        return open_engine(
            graph,
            EngineBuild(
                inputs={"features": InputShape.ranged(low, optimum, high)},
                settings=BuilderSettings(),
            ),
            name="execution-docs",
            graph_version="1",
            weights=(weights,),
            io=EngineIO(
                inputs={"features": TensorSpec(trt.float32, (1, -1, 2))},
                outputs={"result": TensorSpec(trt.float32, (1, -1, 2))},
            ),
        )


def run(*names: str, handle) -> dict:
    namespace = {"handle": handle, "__name__": "docs_example"}
    for name in names:
        exec(compile(example(name), f"docs/execution.md:{name}", "exec"), namespace)
    return namespace


@pytest.mark.gpu
@pytest.mark.backend
def test_cupy_example(handle):
    pytest.importorskip("cupy")
    np.testing.assert_array_equal(run("cupy", handle=handle)["output"], EXPECTED)


@pytest.mark.gpu
@pytest.mark.backend
def test_cuda_python_example(handle):
    pytest.importorskip("cuda.bindings")
    np.testing.assert_array_equal(run("cuda-python", handle=handle)["output"], EXPECTED)


@pytest.mark.gpu
@pytest.mark.backend
def test_cuda_graph_example(handle):
    pytest.importorskip("cuda.bindings")
    skip_capture_on_rtx()
    namespace = run("cuda-python", "cuda-graph", handle=handle)
    np.testing.assert_array_equal(namespace["output"], EXPECTED)


@pytest.mark.gpu
@pytest.mark.backend
def test_a_captured_enqueue_replays_new_input_contents(handle):
    cp = pytest.importorskip("cupy")
    skip_capture_on_rtx()
    with handle.create_execution() as unit:
        unit.set_input_shapes({"features": (1, 4, 2)})
        stream = cp.cuda.Stream(non_blocking=True)
        with stream:
            features = cp.zeros((1, 4, 2), dtype=cp.float32)
            result = cp.zeros((1, 4, 2), dtype=cp.float32)
            addresses = {"features": features.data.ptr, "result": result.data.ptr}
            unit.enqueue(addresses, stream=stream.ptr)
            stream.synchronize()
            stream.begin_capture()
            try:
                unit.enqueue(addresses, stream=stream.ptr)
            finally:
                graph = stream.end_capture()
            for step in range(3):
                features.fill(float(step))  # queued on the same stream, before the replay
                graph.launch(stream)
                stream.synchronize()
                expected = np.full((1, 4, 2), float(step), dtype=np.float32) + BIAS
                np.testing.assert_array_equal(cp.asnumpy(result), expected)

"""EngineExecution without a GPU: its API, and create_execution() on a real EngineHandle."""

from __future__ import annotations

import ctypes
import inspect
import sys
import warnings
from pathlib import Path

import pytest
from backend_requirement import rtx_module
from engine_helpers import DECLARATION, IO, make_graph, write_weights

import tensoracle
from tensoracle import EngineExecution, open_engine
from tensoracle.execution import unit


def test_the_package_exports_the_execution_unit():
    assert tensoracle.EngineExecution is EngineExecution
    assert "EngineExecution" in tensoracle.__all__


def test_creating_a_unit_without_a_gpu_says_a_device_is_needed(tmp_path: Path, monkeypatch):
    if tensoracle.gpu.absent_reason() is None:
        pytest.skip("this machine has a GPU: the unit would be created")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    weights = write_weights(tmp_path / "model.safetensors")
    handle = open_engine(
        make_graph(weights), DECLARATION, name="unit", graph_version="1", weights=(weights,), io=IO
    )
    assert handle.shape_tensor_outputs == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ShapeTensorOutputWarning for this engine
        with pytest.raises(RuntimeError, match="needs a CUDA device"):
            handle.create_execution()
        with pytest.raises(RuntimeError, match="needs a CUDA device"):
            EngineExecution(handle)


def test_the_stream_is_a_required_keyword_argument_of_enqueue():
    stream = inspect.signature(EngineExecution.enqueue).parameters["stream"]
    assert stream.kind is inspect.Parameter.KEYWORD_ONLY
    assert stream.default is inspect.Parameter.empty


def test_shape_tensor_output_warnings_point_at_the_callers_line(tmp_path: Path, monkeypatch):
    if tensoracle.gpu.absent_reason() is None:
        pytest.skip("this machine has a GPU: the unit would be created")
    trt = rtx_module()
    monkeypatch.setenv("TENSORACLE_BACKEND", "tensorrt_rtx")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    from gpu_engines import SHAPE_OUTPUT_PROFILE, shape_tensor_output

    from tensoracle import BuilderSettings, EngineBuild, EngineIO, InputShape, TensorSpec

    declaration = EngineBuild(
        inputs={"data": InputShape.ranged(*SHAPE_OUTPUT_PROFILE["data"])},
        settings=BuilderSettings(),
    )
    io = EngineIO(
        inputs={"data": TensorSpec(trt.float32, (-1, 3))},
        outputs={"size": TensorSpec(trt.int64, (2,)), "copy": TensorSpec(trt.float32, (-1, 3))},
    )
    with pytest.warns(tensoracle.ShapeTensorOutputWarning, match="size") as built:
        handle = open_engine(
            lambda network: shape_tensor_output(trt, network),
            declaration,
            name="shapes",
            graph_version="1",
            weights=(),
            io=io,
        )
    assert [w.filename for w in built] == [__file__]
    assert handle.shape_tensor_outputs == ["size"]  # recorded in the saved header
    for create in (handle.create_execution, lambda: EngineExecution(handle)):
        with (
            pytest.warns(tensoracle.ShapeTensorOutputWarning, match="'size'") as created,
            pytest.raises(RuntimeError, match="needs a CUDA device"),
        ):
            create()
        assert [w.filename for w in created] == [__file__]


@pytest.mark.parametrize(
    ("platform", "library"), [("win32", "nvcuda.dll"), ("linux", "libcuda.so.1")]
)
def test_the_capture_query_loads_the_cuda_driver_of_the_platform(monkeypatch, platform, library):
    loaded: list[str] = []
    load = ctypes.CDLL

    def recording(name, *args, **kwargs):
        loaded.append(name)
        return load(name, *args, **kwargs)

    try:
        load(library)
        loadable = True
    except OSError:
        loadable = False  # always so for nvcuda.dll here: this is Linux
    monkeypatch.setattr(ctypes, "CDLL", recording)
    monkeypatch.setattr(sys, "platform", platform)
    capturing = unit._capture_query()
    assert loaded == [library]
    # Stream capture can be queried exactly where that driver loads.
    assert (capturing is not None) == loadable

"""create_execution() on a real EngineHandle from open_engine, where no GPU is present."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from engine_helpers import DECLARATION, IO, make_graph, write_weights

import tensoracle
from tensoracle import EngineExecution, open_engine


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

"""build_serialized_engine with TensorRT-RTX (or TensorRT): real builds, declarations, failures."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from engine_helpers import DECLARATION, make_graph, trt, write_weights

import tensoracle
from tensoracle import BuilderSettings, EngineBuild, InputShape, build_serialized_engine


@pytest.fixture
def graph(tmp_path: Path):
    return make_graph(write_weights(tmp_path / "model.safetensors"))


def test_builds_the_spec_graph_to_plan_bytes(graph):
    calls: list[int] = []
    plan = build_serialized_engine(lambda network: (calls.append(1), graph(network)), DECLARATION)
    assert isinstance(plan, bytes)
    assert len(plan) > 1000
    assert calls == [1]


def test_fixed_input_with_a_workspace_limit_builds(graph):
    declaration = EngineBuild(
        inputs={"features": InputShape.fixed((1, 64, 2))},
        settings=BuilderSettings(workspace_limit=64 << 20, optimization_level=0),
    )
    assert len(build_serialized_engine(graph, declaration)) > 1000


def test_graph_may_declare_the_fixed_size_directly():
    def fixed(network):
        features = network.add_input("features", trt.float32, (1, 4, 2))
        out = network.add_identity(features).get_output(0)
        out.name = "result"
        network.mark_output(out)

    plan = build_serialized_engine(fixed, EngineBuild({"features": InputShape.fixed((1, 4, 2))}))
    assert len(plan) > 1000


def test_graph_input_without_declaration_is_named(graph):
    with pytest.raises(ValueError, match=r"graph input 'features' has no entry"):
        build_serialized_engine(graph, EngineBuild(inputs={}))


def test_declaration_without_graph_input_is_named(graph):
    inputs = dict(DECLARATION.inputs) | {"mask": InputShape.fixed((1, 2))}
    with pytest.raises(ValueError, match=r"EngineBuild.inputs\['mask'\] names no graph input"):
        build_serialized_engine(graph, EngineBuild(inputs=inputs))


def test_declared_rank_must_match_the_graph_input(graph):
    with pytest.raises(ValueError, match=r"'features'.*rank 2"):
        build_serialized_engine(graph, EngineBuild({"features": InputShape.fixed((1, 2))}))


def test_declared_shape_must_match_fixed_dimensions(graph):
    declaration = EngineBuild({"features": InputShape.ranged((1, 1, 3), (1, 2, 3), (1, 4, 3))})
    with pytest.raises(
        ValueError, match=r"'features'\]\.minimum=\(1, 1, 3\).*dimension 2 \(size 2"
    ):
        build_serialized_engine(graph, declaration)


def test_arguments_are_checked(graph):
    with pytest.raises(ValueError, match="graph must be a function"):
        build_serialized_engine("graph", DECLARATION)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="declaration must be an EngineBuild"):
        build_serialized_engine(graph, {"features": None})  # type: ignore[arg-type]


def test_failed_build_is_a_runtime_error_with_the_backend_messages():
    def broken(network):
        a = network.add_input("a", trt.float32, (2, 3))
        b = network.add_input("b", trt.float32, (4, 5))
        out = network.add_elementwise(a, b, trt.ElementWiseOperation.SUM).get_output(0)
        out.name = "result"
        network.mark_output(out)

    declaration = EngineBuild({"a": InputShape.fixed((2, 3)), "b": InputShape.fixed((4, 5))})
    with pytest.raises(RuntimeError, match=r"could not build the engine: .*broadcast") as caught:
        build_serialized_engine(broken, declaration)
    assert tensoracle.backend().name in str(caught.value)


def test_graph_errors_propagate_unchanged():
    def failing(network):
        raise KeyError("bias")

    with pytest.raises(KeyError, match="bias"):
        build_serialized_engine(failing, DECLARATION)


def test_fp16_graph_builds_from_its_tensor_types():
    def half(network):
        features = network.add_input("features", trt.float16, (1, -1, 2))
        bias = np.full((1, 1, 2), 0.25, dtype=np.float16)
        constant = network.add_constant(bias.shape, bias).get_output(0)
        out = network.add_elementwise(features, constant, trt.ElementWiseOperation.SUM)
        out.get_output(0).name = "result"
        network.mark_output(out.get_output(0))

    assert len(build_serialized_engine(half, DECLARATION)) > 1000


def test_shape_valued_outputs_on_rtx_are_execution_tensors_without_warning():
    if tensoracle.backend().name != "tensorrt_rtx":
        pytest.skip("TensorRT-RTX behaviour; TensorRT 11 marks such outputs as shape tensors")

    def with_shape(network):
        features = network.add_input("features", trt.float32, (1, -1, 2))
        dims = network.add_shape(features).get_output(0)
        dims.name = "dims"
        network.mark_output(dims)
        out = network.add_identity(features).get_output(0)
        out.name = "result"
        network.mark_output(out)

    with warnings.catch_warnings():
        warnings.simplefilter("error", tensoracle.ShapeTensorOutputWarning)
        assert len(build_serialized_engine(with_shape, DECLARATION)) > 1000

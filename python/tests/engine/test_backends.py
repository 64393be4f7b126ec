"""Backend selection and every row of the backends table in docs/engines.md (one test each).

Each row runs for each backend; a backend that is not installed here is skipped with the reason.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from engine_files import header
from engine_helpers import DECLARATION, make_graph, write_weights

import tensoracle
from tensoracle import (
    BuilderSettings,
    EngineBuild,
    EngineIO,
    InputShape,
    TensorSpec,
    build_serialized_engine,
    prepare_engine,
)
from tensoracle.cache.compatibility import cannot_run
from tensoracle.engine.build import build_plan

BACKENDS = ["tensorrt", "tensorrt_rtx"]


@pytest.fixture(params=BACKENDS)
def chosen(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> tensoracle.Backend:
    name = request.param
    if importlib.util.find_spec(name) is None:
        pytest.skip(f"the {name} module is not installed here")
    monkeypatch.setenv("TENSORACLE_BACKEND", name)
    return tensoracle.backend()


def only(chosen: tensoracle.Backend, name: str) -> None:
    if chosen.name != name:
        pytest.skip(f"row checked for {name}; {chosen.name} is covered by its own test")


# Selection ----------------------------------------------------------------------------------


def test_invalid_backend_variable_is_a_clear_error(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TENSORACLE_BACKEND", "onnxruntime")
    with pytest.raises(
        ValueError, match=r"TENSORACLE_BACKEND='onnxruntime'.*tensorrt, tensorrt_rtx"
    ):
        tensoracle.backend()


def test_explicit_backend_that_is_missing_names_its_extra(monkeypatch: pytest.MonkeyPatch):
    if importlib.util.find_spec("tensorrt") is not None:
        pytest.skip("tensorrt is installed here, so requesting it succeeds")
    monkeypatch.setenv("TENSORACLE_BACKEND", "tensorrt")
    with pytest.raises(ImportError, match=r"tensoracle\[tensorrt\]"):
        tensoracle.backend()


def test_automatic_choice_prefers_tensorrt_then_rtx(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("TENSORACLE_BACKEND", raising=False)
    expected = "tensorrt" if importlib.util.find_spec("tensorrt") else "tensorrt_rtx"
    assert tensoracle.backend().name == expected


def test_neither_backend_importable_names_both_extras():
    # A child interpreter in which both modules are unimportable (sys.modules entries of None).
    code = (
        "import sys\n"
        "sys.modules['tensorrt'] = None\n"
        "sys.modules['tensorrt_rtx'] = None\n"
        "import tensoracle\n"
        "try:\n"
        "    tensoracle.backend()\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    environment = {k: v for k, v in os.environ.items() if k != "TENSORACLE_BACKEND"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment, check=True
    )
    assert "tensoracle[tensorrt]" in result.stdout
    assert "tensoracle[rtx]" in result.stdout


def test_backend_reports_module_name_and_exact_version(chosen: tensoracle.Backend):
    assert chosen.module.__name__ == chosen.name
    assert chosen.version == chosen.module.__version__
    assert chosen.name in repr(chosen)


# Table rows ---------------------------------------------------------------------------------


def test_row_module_name(chosen: tensoracle.Backend):
    assert (
        chosen.module.__name__
        == {"tensorrt": "tensorrt", "tensorrt_rtx": "tensorrt_rtx"}[chosen.name]
    )


def test_row_network_flags_strongly_typed_only(chosen: tensoracle.Backend):
    trt = chosen.module
    flags = [name for name in trt.NetworkDefinitionCreationFlag.__members__]
    assert "STRONGLY_TYPED" in flags
    assert "EXPLICIT_BATCH" not in flags
    network = trt.Builder(trt.Logger()).create_network(0)
    assert network.num_inputs == 0


def _config(chosen: tensoracle.Backend, settings: BuilderSettings):
    from tensoracle.engine.build import _configure  # the one place settings are applied

    trt = chosen.module
    builder = trt.Builder(trt.Logger())
    network = builder.create_network(0)
    network.add_input("features", trt.float32, (1, -1, 2))
    targets = chosen.adapter.planned_targets(tensoracle.gpu.properties())
    return trt, _configure(
        chosen,
        builder,
        network,
        DECLARATION if settings is None else EngineBuild(DECLARATION.inputs, settings),
        targets,
    )


def test_row_tf32_is_on_by_default_and_cleared(chosen: tensoracle.Backend):
    trt = chosen.module
    fresh = trt.Builder(trt.Logger()).create_builder_config()
    assert fresh.get_flag(trt.BuilderFlag.TF32) is True
    _, (config, _targets) = _config(chosen, BuilderSettings())
    assert config.get_flag(trt.BuilderFlag.TF32) is False


def test_row_optimization_level_range(chosen: tensoracle.Backend):
    trt = chosen.module
    config = trt.Builder(trt.Logger()).create_builder_config()
    assert config.builder_optimization_level == 3
    for level in chosen.adapter.OPTIMIZATION_LEVELS:
        _, (applied, _targets) = _config(chosen, BuilderSettings(optimization_level=level))
        assert applied.builder_optimization_level == level
    assert list(chosen.adapter.OPTIMIZATION_LEVELS) == [0, 1, 2, 3, 4, 5]
    with pytest.raises(ValueError, match="optimization_level"):
        BuilderSettings(optimization_level=6)


def test_row_rtx_level_above_five_is_silently_clamped(chosen: tensoracle.Backend):
    only(chosen, "tensorrt_rtx")
    trt = chosen.module
    config = trt.Builder(trt.Logger()).create_builder_config()
    config.builder_optimization_level = 6
    assert config.builder_optimization_level == 5  # why BuilderSettings rejects 6 itself


def test_row_targets_rtx_aot_default_set(
    chosen: tensoracle.Backend, monkeypatch: pytest.MonkeyPatch
):
    only(chosen, "tensorrt_rtx")
    monkeypatch.delenv("TENSORACLE_RTX_TARGETS", raising=False)
    trt = chosen.module
    untouched = trt.Builder(trt.Logger()).create_builder_config()
    assert untouched.num_compute_capabilities == 0  # RTX's own default is implicit
    _, (config, targets) = _config(chosen, BuilderSettings())
    read_back = [config.get_compute_capability(i) for i in range(config.num_compute_capabilities)]
    assert read_back == [
        trt.ComputeCapability.SM80,
        trt.ComputeCapability.SM86,
        trt.ComputeCapability.SM89,
        trt.ComputeCapability.SM120,
    ]
    assert targets == ["sm80", "sm86", "sm89", "sm120"]


def test_row_targets_rtx_configured_list(
    chosen: tensoracle.Backend, monkeypatch: pytest.MonkeyPatch
):
    only(chosen, "tensorrt_rtx")
    monkeypatch.setenv("TENSORACLE_RTX_TARGETS", "sm86, sm120")
    _, (config, targets) = _config(chosen, BuilderSettings())
    assert targets == ["sm86", "sm120"]
    assert config.num_compute_capabilities == 2
    monkeypatch.setenv("TENSORACLE_RTX_TARGETS", "sm90")
    with pytest.raises(ValueError, match=r"'sm90' is not a TensorRT-RTX target"):
        chosen.adapter.planned_targets(None)


def test_row_targets_rtx_current_needs_a_gpu(
    chosen: tensoracle.Backend, monkeypatch: pytest.MonkeyPatch
):
    only(chosen, "tensorrt_rtx")
    if tensoracle.gpu.properties() is not None:
        pytest.skip("this machine has a GPU; the no-GPU refusal cannot be observed")
    monkeypatch.setenv("TENSORACLE_RTX_TARGETS", "current")
    with pytest.raises(ValueError, match="has none"):
        chosen.adapter.planned_targets(None)


def test_row_targets_tensorrt_local_gpu(chosen: tensoracle.Backend):
    only(chosen, "tensorrt")
    device = tensoracle.gpu.properties()
    expected = [] if device is None else ["sm" + device["compute_capability"].replace(".", "")]
    assert chosen.adapter.planned_targets(device) == expected


def test_row_plugins_in_networks(chosen: tensoracle.Backend):
    trt = chosen.module
    network = trt.Builder(trt.Logger()).create_network(0)
    has_layers = any(hasattr(network, name) for name in ("add_plugin_v2", "add_plugin_v3"))
    assert has_layers is chosen.adapter.NETWORK_PLUGIN_LAYERS
    assert hasattr(trt.get_plugin_registry(), "load_library")


def test_row_engine_validity_check(chosen: tensoracle.Backend):
    trt = chosen.module
    runtime = trt.Runtime(trt.Logger())
    assert hasattr(runtime, "get_engine_validity") is (chosen.name == "tensorrt_rtx")


def test_row_shape_tensor_outputs_warn_on_tensorrt(chosen: tensoracle.Backend):
    only(chosen, "tensorrt")
    trt = chosen.module

    def with_shape(network):
        features = network.add_input("features", trt.float32, (1, -1, 2))
        dims = network.add_shape(features).get_output(0)
        dims.name = "dims"
        network.mark_output(dims)

    with pytest.warns(tensoracle.ShapeTensorOutputWarning, match="dims"):
        result = build_plan(
            chosen,
            with_shape,
            DECLARATION,
            chosen.adapter.planned_targets(tensoracle.gpu.properties()),
        )
    assert result.shape_tensor_outputs == ["dims"]


def test_row_shape_valued_outputs_are_execution_tensors_on_rtx(chosen: tensoracle.Backend):
    only(chosen, "tensorrt_rtx")
    trt = chosen.module

    def with_shape(network):
        features = network.add_input("features", trt.float32, (1, -1, 2))
        dims = network.add_shape(features).get_output(0)
        dims.name = "dims"
        network.mark_output(dims)

    with warnings.catch_warnings():
        warnings.simplefilter("error", tensoracle.ShapeTensorOutputWarning)
        result = build_plan(chosen, with_shape, DECLARATION, ["sm86"])
    assert result.shape_tensor_outputs == []


def test_row_build_and_deserialize_without_gpu(chosen: tensoracle.Backend, tmp_path: Path):
    if tensoracle.gpu.properties() is not None:
        pytest.skip("this machine has a GPU")
    graph = make_graph(write_weights(tmp_path / "w.safetensors"))
    if chosen.name == "tensorrt":
        with pytest.raises(RuntimeError, match="could not build"):
            build_serialized_engine(graph, DECLARATION)
        return
    plan = build_serialized_engine(graph, DECLARATION)
    trt = chosen.module
    runtime = trt.Runtime(tensoracle.engine.log.trt_logger(chosen))
    assert runtime.deserialize_cuda_engine(plan) is None


def test_row_rtx_validity_without_gpu_is_invalid_without_diagnostics(
    chosen: tensoracle.Backend, tmp_path: Path
):
    only(chosen, "tensorrt_rtx")
    if tensoracle.gpu.properties() is not None:
        pytest.skip("this machine has a GPU")
    trt = chosen.module
    plan = build_serialized_engine(
        make_graph(write_weights(tmp_path / "w.safetensors")),
        EngineBuild({"features": InputShape.fixed((1, 3, 2))}),
    )
    validity, diagnostics = trt.Runtime(trt.Logger()).get_engine_validity(plan)
    assert validity == trt.EngineValidity.INVALID
    assert int(diagnostics) == 0


@pytest.mark.gpu
@pytest.mark.parametrize("level", ["ampere_plus", "same_compute_capability"])
def test_row_hardware_compatibility_is_set_and_read_back_on_tensorrt(
    chosen: tensoracle.Backend, level: str, engine_cache: Path, tmp_path: Path
):
    only(chosen, "tensorrt")
    # The build reads the level back from the built engine and raises when it differs.

    declaration = EngineBuild(
        {"features": InputShape.fixed((1, 3, 2))}, BuilderSettings(hardware_compatibility=level)
    )
    weights = write_weights(tmp_path / "w.safetensors")
    prepared = prepare_engine(
        make_graph(weights), declaration, name="portable", graph_version="1",
        weights=[weights], io=EngineIO(
            inputs={"features": TensorSpec(chosen.module.float32, (1, 3, 2))},
            outputs={"result": TensorSpec(chosen.module.float32, (1, 3, 2))},
        ),
    )  # fmt: skip
    conditions = header(prepared.path)["conditions"]
    assert conditions["hardware_compatibility"] == level
    device = tensoracle.gpu.properties()
    assert cannot_run(conditions, device) is None


def test_both_adapters_offer_what_the_shared_code_calls():
    from tensoracle.engine.backends import tensorrt as trt11
    from tensoracle.engine.backends import tensorrt_rtx as rtx

    def public(module: object) -> set[str]:
        return {name for name in vars(module) if not name.startswith("_") and name.isidentifier()}

    # Names only TensorRT-RTX has: its target list and where it is read from.
    rtx_only = {"TARGETS_VARIABLE", "DEFAULT_TARGETS", "KNOWN_TARGETS", "os", "sorted_targets"}
    shared = {"annotations", "Any", "Mapping"}
    assert public(rtx) - rtx_only - shared == public(trt11) - shared

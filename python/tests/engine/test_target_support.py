"""BuilderSettings.targets and the refusal of tensor types that the build targets cannot run.

The table of refusals in each backend adapter is checked against the backend itself, both ways:
every (type, target) pair listed is really refused by a build that skips tensoracle's check, and
every pair not listed really builds. A new backend version that changes its mind fails here.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from engine_files import header
from engine_helpers import IO, make_graph, write_weights

import tensoracle
from tensoracle import BuilderSettings, EngineBuild, InputShape, _core, build_serialized_engine
from tensoracle.cache import compatibility
from tensoracle.engine.build import _configure
from tensoracle.engine.log import capture, trt_logger

ALL_TARGETS = ("sm75", "sm80", "sm86", "sm89", "sm120", "sm121")
# The graphs below, by the tensor type that decides where they can run.
KINDS = ("fp32", "fp16", "bf16", "int8", "fp8", "int4", "fp4")
# What TensorRT-RTX 1.7.1.116 refused in real builds; the message part that names the reason.
RTX_REFUSED = {
    ("fp32", "sm75"): "FP32 GEMM is not supported",
    ("int8", "sm75"): "FP32 GEMM is not supported",  # the matrix multiply after dequantization
    ("bf16", "sm75"): "HW-specific datatypes: b16",
    ("int4", "sm75"): "HW-specific datatypes: int4",
    **{("fp8", t): "HW-specific datatypes: fp8_e4m3" for t in ("sm75", "sm80", "sm86")},
    **{("fp4", t): "HW-specific datatypes: fp4_e2m1" for t in ("sm75", "sm80", "sm86", "sm89")},
}
# The tensor type our ValueError names for each refused kind.
NAMED_TYPE = {
    "fp32": "FLOAT",
    "int8": "FLOAT",
    "bf16": "BF16",
    "int4": "INT4",
    "fp8": "FP8",
    "fp4": "FP4",
}


@pytest.fixture
def rtx(monkeypatch: pytest.MonkeyPatch) -> tensoracle.Backend:
    if importlib.util.find_spec("tensorrt_rtx") is None:
        pytest.skip("the tensorrt_rtx module is not installed here")
    monkeypatch.setenv("TENSORACLE_BACKEND", "tensorrt_rtx")
    monkeypatch.delenv("TENSORACLE_RTX_TARGETS", raising=False)
    return tensoracle.backend()


def quantized(network: Any, value: Any, low: Any, scale_shape: tuple[int, ...]) -> Any:
    """Quantize to ``low`` and dequantize back to fp32 with one constant scale."""
    trt = tensoracle.backend().module
    scale = np.full(scale_shape, 0.002, np.float32)
    scale_tensor = network.add_constant(scale.shape, scale).get_output(0)
    low_value = network.add_quantize(value, scale_tensor, low).get_output(0)
    return network.add_dequantize(low_value, scale_tensor, trt.float32).get_output(0)


def typed_graph(trt: Any, kind: str) -> Callable[[Any], None]:
    """``features (4, 32) @ matrix (32, 16)`` whose inner tensors have the type ``kind``."""
    rng = np.random.default_rng(3)
    matrix = rng.uniform(-0.25, 0.25, (32, 16)).astype(np.float32)

    def graph(network: Any) -> None:
        def constant(array: np.ndarray) -> Any:
            return network.add_constant(array.shape, np.ascontiguousarray(array)).get_output(0)

        features = network.add_input("features", trt.float32, (4, 32))
        weights = constant(matrix)
        if kind in ("fp16", "bf16"):
            low = trt.float16 if kind == "fp16" else trt.bfloat16
            features = network.add_cast(features, low).get_output(0)
            weights = network.add_cast(weights, low).get_output(0)
        elif kind in ("int8", "fp8"):  # per-tensor Q/DQ of both operands
            low = trt.int8 if kind == "int8" else trt.fp8
            features = quantized(network, features, low, (1,))
            weights = quantized(network, weights, low, (1,))
        elif kind in ("int4", "fp4"):  # weight-only, one scale per block of 16 rows
            low = trt.int4 if kind == "int4" else trt.fp4
            weights = quantized(network, weights, low, (2, 16))
        product = network.add_matrix_multiply(
            features, trt.MatrixOperation.NONE, weights, trt.MatrixOperation.NONE
        ).get_output(0)
        if product.dtype != trt.float32:
            product = network.add_cast(product, trt.float32).get_output(0)
        product.name = "product"
        network.mark_output(product)

    return graph


def declared(target: str | None = None) -> EngineBuild:
    return EngineBuild(
        inputs={"features": InputShape.fixed((4, 32))},
        settings=BuilderSettings(
            optimization_level=0, targets=None if target is None else (target,)
        ),
    )


def raw_build(chosen: tensoracle.Backend, kind: str, target: str) -> tuple[bool, list[str]]:
    """Builds with the backend directly, without tensoracle's check: (built, logged errors)."""
    trt = chosen.module
    with capture() as errors:
        builder = trt.Builder(trt_logger(chosen))
        network = builder.create_network(0)
        typed_graph(trt, kind)(network)
        config, _ = _configure(chosen, builder, network, declared(target), [target])
        plan = builder.build_serialized_network(network, config)
    return plan is not None, list(errors)


# BuilderSettings.targets ---------------------------------------------------------------------


def test_targets_are_validated_in_the_declaration():
    assert BuilderSettings().targets is None
    assert BuilderSettings(targets=["sm89", "sm120"]).targets == ("sm89", "sm120")
    assert BuilderSettings(targets=("current",)).targets == ("current",)
    for bad, words in (
        ("sm89", "sequence of compute capabilities"),
        ((), "is empty"),
        (("SM89",), "'SM89'"),
        (("sm_89",), "'sm_89'"),
        ((89,), "89"),
        (("current", "sm89"), "only entry"),
        (("sm89", "sm89"), "twice"),
    ):
        with pytest.raises(ValueError, match=r"BuilderSettings\.targets") as raised:
            BuilderSettings(targets=bad)  # type: ignore[arg-type]
        assert words in str(raised.value)


def test_rtx_declared_targets_win_over_the_variable(
    rtx: tensoracle.Backend, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("TENSORACLE_RTX_TARGETS", "sm86")
    assert rtx.adapter.planned_targets(None) == ["sm86"]
    assert rtx.adapter.planned_targets(None, ("sm89", "sm120")) == ["sm89", "sm120"]
    with pytest.raises(ValueError, match=r"BuilderSettings.targets holds 'sm90'.*sm121"):
        rtx.adapter.planned_targets(None, ("sm90",))
    if tensoracle.gpu.properties() is None:
        with pytest.raises(ValueError, match=r"BuilderSettings.targets=\('current',\).*has none"):
            rtx.adapter.planned_targets(None, ("current",))


def test_tensorrt_declared_targets_must_be_the_local_gpu():
    from tensoracle.engine.backends import tensorrt as adapter

    device = {"compute_capability": "8.9"}
    assert adapter.planned_targets(device, None) == ["sm89"]
    assert adapter.planned_targets(device, ("current",)) == ["sm89"]
    assert adapter.planned_targets(device, ("sm89",)) == ["sm89"]
    with pytest.raises(ValueError, match=r"only for the local GPU \(sm89\).*tensorrt_rtx"):
        adapter.planned_targets(device, ("sm120",))
    with pytest.raises(ValueError, match="has none"):
        adapter.planned_targets(None, ("sm89",))
    assert adapter.planned_targets(None, None) == []


def test_declared_targets_are_set_recorded_and_part_of_the_identity(
    rtx: tensoracle.Backend, engine_cache: Path, tmp_path: Path
):
    weights = write_weights(tmp_path / "model.safetensors")
    graph = make_graph(weights)
    base = EngineBuild(
        inputs={"features": InputShape.ranged((1, 1, 2), (1, 4, 2), (1, 8, 2))},
        settings=BuilderSettings(optimization_level=0),
    )
    chosen_targets = EngineBuild(
        inputs=base.inputs, settings=BuilderSettings(optimization_level=0, targets=("sm120",))
    )
    arguments: dict[str, Any] = {
        "name": "targets",
        "graph_version": "1",
        "weights": [weights],
        "io": IO,
    }
    default = tensoracle.prepare_engine(graph, base, **arguments)
    narrow = tensoracle.prepare_engine(graph, chosen_targets, **arguments)
    again = tensoracle.prepare_engine(graph, chosen_targets, **arguments)
    assert default.built
    assert narrow.built
    assert not again.built
    assert narrow.path != default.path
    assert again.path == narrow.path
    assert header(default.path)["conditions"]["targets"] == ["sm80", "sm86", "sm89", "sm120"]
    assert header(narrow.path)["conditions"]["targets"] == ["sm120"]
    assert header(narrow.path)["references"]["targets"] == ["sm120"]


# Refusals, checked against real builds --------------------------------------------------------


@pytest.mark.parametrize(("kind", "target"), sorted(RTX_REFUSED))
def test_rtx_refused_pair_is_a_value_error_before_building(
    rtx: tensoracle.Backend, kind: str, target: str
):
    built, errors = raw_build(rtx, kind, target)
    assert not built, f"TensorRT-RTX {rtx.version} now builds {kind} for {target}"
    assert RTX_REFUSED[(kind, target)] in " ".join(errors)

    calls: list[int] = []
    graph = typed_graph(rtx.module, kind)

    def counted(network: Any) -> None:
        calls.append(1)
        graph(network)

    with pytest.raises(ValueError, match="cannot build for target") as raised:
        build_serialized_engine(counted, declared(target))
    message = str(raised.value)
    assert f"has type {NAMED_TYPE[kind]}" in message
    assert f"cannot build for target(s) {target}" in message
    assert "BuilderSettings.targets" in message
    assert "tensor '" in message
    assert calls == [1]


@pytest.mark.parametrize("kind", KINDS)
def test_rtx_pairs_not_listed_really_build(rtx: tensoracle.Backend, kind: str):
    accepted = [target for target in ALL_TARGETS if (kind, target) not in RTX_REFUSED]
    for target in accepted:
        plan = build_serialized_engine(typed_graph(rtx.module, kind), declared(target))
        assert len(plan) > 0, f"{kind} for {target}"


def test_rtx_default_targets_refuse_fp8_naming_only_the_two_that_cannot(rtx: tensoracle.Backend):
    with pytest.raises(ValueError, match="has type FP8") as raised:
        build_serialized_engine(typed_graph(rtx.module, "fp8"), declared())
    message = str(raised.value)
    assert "cannot build for target(s) sm80, sm86 " in message
    assert "(the targets are sm80, sm86, sm89, sm120, the backend's default)" in message
    assert "BuilderSettings(targets=('sm89', 'sm120', 'sm121'))" in message


def test_rtx_refusal_saves_nothing_and_keeps_what_was_saved(
    rtx: tensoracle.Backend, engine_cache: Path
):
    io = tensoracle.EngineIO(
        inputs={"features": tensoracle.TensorSpec(rtx.module.float32, (4, 32))},
        outputs={"product": tensoracle.TensorSpec(rtx.module.float32, (4, 16))},
    )
    arguments: dict[str, Any] = {"name": "typed", "graph_version": "1", "weights": [], "io": io}
    kept = tensoracle.prepare_engine(typed_graph(rtx.module, "fp16"), declared(), **arguments)
    before = kept.path.read_bytes()
    fp8 = typed_graph(rtx.module, "fp8")
    with pytest.raises(ValueError, match="FP8"):  # a forced rebuild would replace the entry
        tensoracle.prepare_engine(fp8, declared(), force_rebuild=True, **arguments)
    with pytest.raises(ValueError, match="FP8"):  # another version would add one
        tensoracle.prepare_engine(fp8, declared(), **{**arguments, "graph_version": "2"})
    assert sorted(path.name for path in engine_cache.glob("*.engine")) == [kept.path.name]
    assert kept.path.read_bytes() == before


def test_targets_in_any_order_are_one_identity():
    # `tensoracle build --targets sm89,sm86` against a recipe declaring sm86,sm89: one engine.
    declared = BuilderSettings(targets=("sm86", "sm89", "sm120"))
    shuffled = BuilderSettings(targets=["sm120", "sm89", "sm86"])
    assert declared.targets == shuffled.targets == ("sm86", "sm89", "sm120")
    rtx_keys = compatibility.hardware("tensorrt_rtx", None, ["sm120", "sm89", "sm86"], None)
    assert rtx_keys["targets"] == ["sm86", "sm89", "sm120"]
    first = _core.make_identity({"name": "m", **rtx_keys})
    second = _core.make_identity({"name": "m", "gpu": None, "targets": ["sm89", "sm86", "sm120"]})
    assert first.file_name == second.file_name


def test_repeated_and_misspelled_targets_are_refused_by_name():
    with pytest.raises(ValueError, match=r"BuilderSettings\.targets=.*names 'sm89' twice"):
        BuilderSettings(targets=("sm89", "sm86", "sm89"))
    for bad in ("sm8x", "SM86"):
        with pytest.raises(ValueError, match=rf"BuilderSettings\.targets holds '{bad}'"):
            BuilderSettings(targets=(bad,))
    with pytest.raises(ValueError, match=r'"targets" holds "SM86"'):
        _core.make_identity({"name": "m", "targets": ["SM86"]})

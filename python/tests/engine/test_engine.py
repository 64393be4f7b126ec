"""open_engine / prepare_engine over the real store and TensorRT-RTX: hits, misses, rebuilds,
damaged files, IO checks and the no-GPU behaviour."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from engine_files import header
from engine_helpers import (
    DECLARATION,
    IO,
    make_graph,
    raising_graph,
    refused_gpu_reason,
    skip_where_the_gpu_is_refused,
    trt,
    write_weights,
)

import tensoracle
from tensoracle import (
    BuilderSettings,
    CorruptEngineError,
    EngineBuild,
    EngineConditionError,
    EngineIO,
    EngineIOError,
    EngineTargetError,
    TensorSpec,
    open_engine,
    prepare_engine,
)

SUPPORT = Path(__file__).parents[1] / "support"  # the helpers a child process imports


@pytest.fixture
def weights(tmp_path: Path) -> Path:
    return write_weights(tmp_path / "model.safetensors")


def open_example(weight_file: Path, graph=raising_graph, **overrides):
    arguments = {
        "name": "example",
        "graph_version": "1",
        "weights": (weight_file,),
        "io": IO,
    }
    arguments.update(overrides)
    declaration = arguments.pop("declaration", DECLARATION)
    try:
        return open_engine(graph, declaration, **arguments)
    except EngineTargetError:
        # Where the backend cannot build for this GPU, open_engine refuses before building
        # (asserted by the refused-GPU test below): a test that needs the handle skips there.
        skip_where_the_gpu_is_refused()
        raise
    except RuntimeError as error:
        # Where the backend refuses a plan built for this GPU, open_engine saves the engine and
        # then raises: a test that needs the handle skips there.
        if "it cannot run on this device" in str(error):
            skip_where_the_gpu_is_refused()
        raise


def build_example(weights: Path, **overrides):
    calls: list[int] = []
    handle = open_example(weights, make_graph(weights, calls), **overrides)
    assert calls == [1]
    return handle


def test_first_call_builds_and_later_calls_reuse_without_the_graph(engine_cache: Path, weights):
    built = build_example(weights)
    assert built.built is True
    assert built.path.parent == engine_cache
    assert built.path.name.startswith("example-")
    assert built.path.suffix == ".engine"
    reused = open_example(weights)  # the graph raises if called
    assert reused.built is False
    assert reused.path == built.path
    assert bytes(reused.plan) == bytes(built.plan)


def test_a_second_process_reuses_the_saved_engine(engine_cache: Path, weights):
    first = build_example(weights)
    child = (
        "import sys\n"
        f"sys.path.insert(0, {str(SUPPORT)!r})\n"
        "from pathlib import Path\n"
        "from engine_helpers import DECLARATION, IO, raising_graph\n"
        "from tensoracle import open_engine\n"
        f"handle = open_engine(raising_graph, DECLARATION, name='example', graph_version='1',\n"
        f"                     weights=[Path({str(weights)!r})], io=IO)\n"
        "print(handle.built, handle.path)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, env=os.environ.copy()
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", str(first.path)]


def test_header_records_the_identity_conditions(engine_cache: Path, weights):
    handle = build_example(weights)
    saved = header(handle.path)
    conditions = saved["conditions"]
    chosen = tensoracle.backend()
    assert conditions["name"] == "example"
    assert conditions["graph_version"] == "1"
    assert conditions["backend"] == chosen.name
    assert conditions["backend_version"] == chosen.version
    assert conditions["inputs"] == {
        "features": {"min": [1, 1, 2], "opt": [1, 64, 2], "max": [1, 448, 2]}
    }
    assert conditions["optimization_level"] == 3
    assert conditions["tf32"] is False
    import hashlib

    assert conditions["weights"] == [hashlib.sha256(weights.read_bytes()).hexdigest()]
    assert conditions["plugins"] == []
    # TensorRT-RTX engines are identified by their targets, TensorRT 11 ones by the GPU.
    expected_gpu = None if chosen.name == "tensorrt_rtx" else tensoracle.gpu.properties()
    assert conditions["gpu"] == expected_gpu
    assert conditions["targets"] == handle.references["targets"]
    assert "workspace_limit" not in conditions
    references = saved["references"]
    assert references["workspace_limit"] is None
    assert references["shape_tensor_outputs"] == []
    names = [tensor["name"] for tensor in references["io"]["tensors"]]
    assert names == ["features", "result"]


def test_without_gpu_identity_says_so_and_records_rtx_targets(engine_cache: Path, weights):
    if tensoracle.gpu.properties() is not None:
        pytest.skip("this machine has a GPU")
    if tensoracle.backend().name != "tensorrt_rtx":
        pytest.skip("only TensorRT-RTX builds without a GPU")
    conditions = header(build_example(weights).path)["conditions"]
    assert conditions["gpu"] is None
    assert conditions["targets"] == ["sm80", "sm86", "sm89", "sm120"]


def test_without_gpu_the_engine_is_refused_lazily_with_the_reason(engine_cache: Path, weights):
    if tensoracle.gpu.properties() is not None:
        pytest.skip("this machine has a GPU")
    handle = build_example(weights)
    assert handle.plan is not None
    assert handle.runtime is not None
    with pytest.raises(RuntimeError, match=r"needs a CUDA device .*libcuda") as caught:
        handle.engine  # noqa: B018
    assert str(handle.path) in str(caught.value)
    assert "said:" in str(caught.value)


@pytest.mark.gpu
def test_on_a_gpu_outside_the_targets_open_engine_refuses_and_prepare_engine_builds(
    engine_cache: Path, weights, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    if refused_gpu_reason() is None:
        pytest.skip("the backend accepts this GPU, so open_engine returns a handle here")
    chosen = tensoracle.backend()
    device = tensoracle.gpu.properties()
    local = "sm" + device["compute_capability"].replace(".", "")
    targets = chosen.adapter.planned_targets(device)
    arguments = {"name": "example", "graph_version": "1", "weights": (weights,), "io": IO}
    calls: list[int] = []
    # open_engine says so before building or reading anything ...
    with pytest.raises(EngineTargetError) as refused:
        open_engine(make_graph(weights, calls), DECLARATION, **arguments)
    assert local in str(refused.value)
    assert ", ".join(targets) in str(refused.value)
    assert calls == []
    assert list(engine_cache.glob("example-*.engine")) == []
    # ... while prepare_engine builds for the targets (for other GPUs), without the GPU's
    # properties in the identity.
    prepared = prepare_engine(make_graph(weights, calls), DECLARATION, **arguments)
    assert (prepared.built, calls) == (True, [1])
    conditions = header(prepared.path)["conditions"]
    assert (conditions["gpu"], conditions["targets"]) == (None, targets)
    with pytest.raises(EngineTargetError):
        open_engine(raising_graph, DECLARATION, **arguments)
    # Described as a GPU of the targets, this machine finds the entry, and the backend's
    # validity check (on the real GPU) says before deserializing that it cannot run here: a
    # miss with that reason, built again, and the new engine is refused at deserialization.
    major, minor = targets[-1][2:-1], targets[-1][-1]
    described = {"name": "described GPU", "compute_capability": f"{major}.{minor}"}
    monkeypatch.setenv("TENSORACLE_DESCRIBED_GPU", json.dumps(described))
    with (
        caplog.at_level("WARNING", logger="tensoracle.cache"),
        pytest.raises(RuntimeError, match=r"it cannot run on this device$"),
    ):
        open_engine(make_graph(weights, calls), DECLARATION, **arguments)
    assert calls == [1, 1]
    assert "cannot run on this device" in caplog.text
    rebuilt = header(prepared.path)["references"]["rebuild_reason"]
    assert rebuilt["compared_with"] == prepared.path.name
    assert "INVALID" in rebuilt["cannot_run_here"]


@pytest.mark.gpu
def test_with_gpu_open_engine_deserializes_and_checks_the_engine(engine_cache: Path, weights):
    skip_where_the_gpu_is_refused()  # e.g. TensorRT-RTX on a GPU outside its targets (Hopper)
    handle = build_example(weights)
    engine = handle.engine
    assert engine.num_io_tensors == 2
    assert handle.plan is None  # the file mapping is released after deserialization
    reused = open_example(weights)
    assert reused.engine.get_tensor_name(0) == "features"


def test_prepare_engine_builds_once_then_reports_the_saved_path(engine_cache: Path, weights):
    calls: list[int] = []
    first = prepare_engine(
        make_graph(weights, calls),
        DECLARATION,
        name="example",
        graph_version="1",
        weights=[weights],
        io=IO,
    )
    second = prepare_engine(
        raising_graph, DECLARATION, name="example", graph_version="1", weights=[weights], io=IO
    )
    assert (first.built, second.built) == (True, False)
    assert first.path == second.path
    assert first.path.is_file()
    assert calls == [1]
    assert open_example(weights).path == first.path


def test_changed_weights_select_a_new_entry(engine_cache: Path, weights):
    first = build_example(weights)
    write_weights(weights, bias=(2.0, 3.0))
    second = build_example(weights)
    assert second.path != first.path
    assert first.path.is_file()
    assert second.path.is_file()


def test_changed_graph_version_selects_a_new_entry(engine_cache: Path, weights):
    first = build_example(weights)
    second = build_example(weights, graph_version="2")
    assert second.path != first.path
    assert header(second.path)["conditions"]["graph_version"] == "2"


def test_workspace_limit_reuses_the_entry_and_keeps_the_recorded_value(engine_cache: Path, weights):
    first = build_example(weights)
    limited = EngineBuild(DECLARATION.inputs, BuilderSettings(workspace_limit=256 << 20))
    reused = open_example(weights, declaration=limited)
    assert reused.path == first.path
    assert reused.built is False
    assert header(first.path)["references"]["workspace_limit"] is None
    rebuilt = build_example(weights, declaration=limited, force_rebuild=True)
    assert rebuilt.path == first.path
    assert header(first.path)["references"]["workspace_limit"] == 256 << 20


def test_force_rebuild_builds_again_over_an_intact_entry(engine_cache: Path, weights):
    first = build_example(weights)
    before = first.path.stat().st_ino
    again = build_example(weights, force_rebuild=True)
    assert again.built is True
    assert again.path == first.path
    assert first.path.stat().st_ino != before  # replaced by a new file


def test_flipped_plan_byte_is_a_corrupt_engine(engine_cache: Path, weights):
    path = build_example(weights).path
    data = bytearray(path.read_bytes())
    data[-100] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptEngineError) as caught:
        open_example(weights)
    assert str(path) in str(caught.value)
    assert build_example(weights, force_rebuild=True).path == path  # the caller may rebuild


def test_truncated_file_is_a_corrupt_engine(engine_cache: Path, weights):
    path = build_example(weights).path
    with path.open("r+b") as stream:
        stream.truncate(path.stat().st_size // 2)
    with pytest.raises(CorruptEngineError):
        open_example(weights)
    with pytest.raises(CorruptEngineError):
        prepare_engine(
            raising_graph, DECLARATION, name="example", graph_version="1", weights=[weights], io=IO
        )


def test_entry_with_other_conditions_is_a_condition_error(engine_cache: Path, weights):
    one = build_example(weights)
    two = build_example(weights, graph_version="2")
    two.path.write_bytes(one.path.read_bytes())
    with pytest.raises(EngineConditionError):
        open_example(weights, graph_version="2")


def _spec(**changes) -> TensorSpec:
    return replace(IO.outputs["result"], **changes)


@pytest.mark.parametrize(
    ("io", "tensor", "field", "observed", "expected"),
    [
        (
            EngineIO(IO.inputs, {"output": IO.outputs["result"]}),
            "output",
            "name",
            "no such tensor",
            "'output'",
        ),
        (EngineIO(IO.inputs, {}), "result", "name", "'result'", "only the declared tensors"),
        (
            EngineIO({**IO.inputs, "result": IO.outputs["result"]}, {}),
            "result",
            "mode",
            "OUTPUT",
            "INPUT",
        ),
        (
            EngineIO(IO.inputs, {"result": _spec(dtype=trt.float16)}),
            "result",
            "dtype",
            "FLOAT",
            "HALF",
        ),
        (
            EngineIO(IO.inputs, {"result": _spec(shape=(1, -1, 3))}),
            "result",
            "shape",
            "(1, -1, 2)",
            "(1, -1, 3)",
        ),
        (
            EngineIO(IO.inputs, {"result": _spec(location=trt.TensorLocation.HOST)}),
            "result",
            "location",
            "DEVICE",
            "HOST",
        ),
        (
            EngineIO(IO.inputs, {"result": _spec(format=trt.TensorFormat.CHW32)}),
            "result",
            "format",
            "LINEAR",
            "CHW32",
        ),
    ],
)
def test_io_mismatch_names_tensor_field_values_and_path(
    engine_cache: Path, weights, io, tensor, field, observed, expected
):
    path = build_example(weights).path
    with pytest.raises(EngineIOError) as caught:
        open_example(weights, io=io)
    message = str(caught.value)
    for part in (
        repr(tensor),
        repr(field),
        f"observed={observed}",
        f"expected={expected}",
        f"path={path}",
    ):
        assert part in message
    assert path.is_file()  # the saved engine is kept


def test_matching_location_and_format_are_accepted(engine_cache: Path, weights):
    build_example(weights)
    io = EngineIO(
        {
            "features": TensorSpec(
                trt.float32, (1, -1, 2), trt.TensorLocation.DEVICE, trt.TensorFormat.LINEAR
            )
        },
        IO.outputs,
    )
    assert open_example(weights, io=io).built is False


def test_io_mismatch_on_a_fresh_build_saves_nothing(engine_cache: Path, weights):
    # As in tensoracle 1.x: the built engine is checked against io before it is written, so a
    # wrong declaration never leaves an entry that a later call would reuse.
    wrong = EngineIO(IO.inputs, {"result": _spec(dtype=trt.int32)})
    with pytest.raises(EngineIOError, match="'dtype'"):
        build_example(weights, io=wrong)
    assert not list(engine_cache.glob("*.engine"))
    assert build_example(weights).built is True


def test_profile_mismatch_is_reported(weights):
    # The profile is part of the identity, so a saved header can only disagree when it was
    # written differently; the check itself compares the recorded profile with the declaration.
    from tensoracle.engine.io import check_io

    signature = {
        "tensors": [
            {
                "name": "features",
                "mode": "INPUT",
                "dtype": "FLOAT",
                "shape": [1, -1, 2],
                "location": "DEVICE",
                "format": "LINEAR",
                "profile": {"min": [1, 1, 2], "opt": [1, 32, 2], "max": [1, 448, 2]},
            },
            {
                "name": "result",
                "mode": "OUTPUT",
                "dtype": "FLOAT",
                "shape": [1, -1, 2],
                "location": "DEVICE",
                "format": "LINEAR",
            },
        ]
    }
    with pytest.raises(EngineIOError) as caught:
        check_io(IO, DECLARATION, signature, "/cache/x.engine", "saved header of")
    message = str(caught.value)
    assert "'features'" in message
    assert "'profile range'" in message
    assert "path=/cache/x.engine" in message
    assert "observed=((1, 1, 2), (1, 32, 2), (1, 448, 2))" in message
    assert "expected=((1, 1, 2), (1, 64, 2), (1, 448, 2))" in message


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({"name": ""}, "name must be a non-empty string"),
        ({"graph_version": 1}, "graph_version must be a non-empty string"),
        ({"weights": "model.safetensors"}, "weights must be a sequence of paths"),
        ({"weights": [3]}, "weights holds 3"),
        ({"io": None}, "io must be an EngineIO"),
        ({"force_rebuild": "yes"}, "force_rebuild must be True or False"),
        ({"declaration": {"features": None}}, "declaration must be an EngineBuild"),
    ],
)
def test_invalid_arguments_are_value_errors(engine_cache: Path, weights, overrides, words):
    with pytest.raises(ValueError, match=words):
        open_example(weights, **overrides)


def test_missing_weight_file_is_an_os_error_naming_it(engine_cache: Path, tmp_path: Path):
    missing = tmp_path / "absent.safetensors"
    with pytest.raises(OSError, match=r"absent\.safetensors"):
        open_example(missing)


def test_invalid_rtx_targets_variable_is_reported(engine_cache: Path, weights, monkeypatch):
    if tensoracle.backend().name != "tensorrt_rtx":
        pytest.skip("TensorRT-RTX setting")
    monkeypatch.setenv("TENSORACLE_RTX_TARGETS", "sm90")
    with pytest.raises(ValueError, match="TENSORACLE_RTX_TARGETS"):
        open_example(weights)


def test_configured_rtx_targets_select_another_entry(engine_cache: Path, weights, monkeypatch):
    if tensoracle.backend().name != "tensorrt_rtx":
        pytest.skip("TensorRT-RTX setting")
    default = build_example(weights)
    monkeypatch.setenv("TENSORACLE_RTX_TARGETS", "sm86")
    narrow = build_example(weights)
    assert narrow.path != default.path
    assert header(narrow.path)["conditions"]["targets"] == ["sm86"]


def test_caller_logger_receives_the_backend_messages(engine_cache: Path, weights):
    received: list[str] = []

    class Collecting(trt.ILogger):
        def __init__(self) -> None:
            trt.ILogger.__init__(self)

        def log(self, severity, msg) -> None:
            received.append(f"{severity.name}: {msg}")

    def broken(network) -> None:
        features = network.add_input("features", trt.float32, (1, -1, 2))
        other = network.add_constant((3, 3, 3), trt.Weights(np.ones(27, dtype=np.float32)))
        out = network.add_elementwise(features, other.get_output(0), trt.ElementWiseOperation.SUM)
        out.get_output(0).name = "result"
        network.mark_output(out.get_output(0))

    with pytest.raises(RuntimeError, match="could not build the engine"):
        open_example(weights, broken, logger=Collecting())
    assert any(message.startswith("ERROR: ") for message in received)
    assert not list(engine_cache.glob("*.engine"))


def test_concurrent_first_opens_build_once(engine_cache: Path, weights, tmp_path: Path):
    # Several processes start together on an empty cache: the exclusive lock and the re-check
    # under it let exactly one build; the others wait and reuse its file.
    skip_where_the_gpu_is_refused()  # each process needs a handle
    marker = tmp_path / "graph-calls"
    marker.mkdir()
    child = (
        "import os, sys, uuid\n"
        f"sys.path.insert(0, {str(SUPPORT)!r})\n"
        "from pathlib import Path\n"
        "from engine_helpers import DECLARATION, IO, make_graph\n"
        "from tensoracle import open_engine\n"
        f"weights = Path({str(weights)!r})\n"
        "inner = make_graph(weights)\n"
        "def graph(network):\n"
        f"    (Path({str(marker)!r}) / uuid.uuid4().hex).touch()\n"
        "    inner(network)\n"
        "handle = open_engine(graph, DECLARATION, name='example', graph_version='1',\n"
        "                     weights=[weights], io=IO)\n"
        "print(handle.built, handle.path)\n"
    )
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", child],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ.copy(),
        )
        for _ in range(4)
    ]
    outputs = [process.communicate(timeout=120) for process in processes]
    for process, (_, error) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, error
    results = [stdout.split() for stdout, _ in outputs]
    assert sorted(built for built, _ in results) == ["False", "False", "False", "True"]
    assert len({path for _, path in results}) == 1
    assert len(list(marker.iterdir())) == 1

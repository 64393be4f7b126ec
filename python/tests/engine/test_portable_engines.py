"""Build once, run on every GPU that can: a real TensorRT-RTX build made without a GPU for
sm86, sm89 and sm120 is reused by other processes that describe their GPU (through the
``TENSORACLE_DESCRIBED_GPU`` test seam) as one of those, and refused, before anything is read or
built, by one that describes a GPU outside them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from engine_files import header
from engine_helpers import DECLARATION, IO, make_graph, raising_graph, write_weights

import tensoracle
from tensoracle import BuilderSettings, prepare_engine

SUPPORT = Path(__file__).parents[1] / "support"
CI_TARGETS = ("sm86", "sm89", "sm120")
PORTABLE = replace(DECLARATION, settings=BuilderSettings(targets=CI_TARGETS))
RTX_4090 = {"name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"}
H200 = {"name": "NVIDIA H200", "compute_capability": "9.0"}
RTX_2080 = {"name": "NVIDIA GeForce RTX 2080", "compute_capability": "7.5"}

# A child process: opens (or prepares) the engine with a graph that must not be called and
# prints the outcome as JSON; the declaration's targets are given as argv[3] ("-" for none).
CHILD = """
import json, sys
sys.path.insert(0, {support!r})
from dataclasses import replace
from pathlib import Path
from engine_helpers import DECLARATION, IO, raising_graph
import tensoracle
from tensoracle import BuilderSettings
function = getattr(tensoracle, sys.argv[1])
targets = None if sys.argv[3] == "-" else tuple(sys.argv[3].split(","))
declaration = replace(DECLARATION, settings=BuilderSettings(targets=targets))
try:
    done = function(raising_graph, declaration, name="example", graph_version="1",
                    weights=[Path(sys.argv[2])], io=IO)
except Exception as error:
    print(json.dumps({{"error": type(error).__name__, "message": str(error)}}))
else:
    print(json.dumps({{"built": done.built, "path": str(done.path)}}))
"""


@pytest.fixture
def weights(tmp_path: Path) -> Path:
    return write_weights(tmp_path / "model.safetensors")


@pytest.fixture(autouse=True)
def rtx_without_gpu():
    if tensoracle.backend().name != "tensorrt_rtx":
        pytest.skip("only TensorRT-RTX builds for a list of GPUs")
    if tensoracle.gpu.absent_reason() is None:
        pytest.skip("this machine has a GPU: the described GPUs stand for machines it is not")


def child(function: str, weights: Path, device: dict | None, targets: str = ",".join(CI_TARGETS)):
    environment = os.environ.copy()
    environment.pop(tensoracle.gpu.DESCRIBED_VARIABLE, None)
    environment.pop("TENSORACLE_RTX_TARGETS", None)
    if device is not None:
        environment[tensoracle.gpu.DESCRIBED_VARIABLE] = json.dumps(device)
    result = subprocess.run(
        [sys.executable, "-c", CHILD.format(support=str(SUPPORT)), function, str(weights), targets],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_ci_built_entry_is_reused_by_a_gpu_of_its_targets_and_refused_by_another(
    engine_cache: Path, weights: Path
):
    calls: list[int] = []
    built = prepare_engine(
        make_graph(weights, calls), PORTABLE, name="example", graph_version="1",
        weights=[weights], io=IO,
    )  # fmt: skip
    assert (built.built, calls) == (True, [1])
    conditions = header(built.path)["conditions"]
    assert (conditions["gpu"], conditions["targets"]) == (None, list(CI_TARGETS))
    recorded = built.path.read_bytes()

    # A machine with an RTX 4090 (sm89) computes the same identity and opens the CI entry
    # without calling the graph (the child's graph raises if called).
    opened = child("open_engine", weights, RTX_4090)
    assert opened == {"built": False, "path": str(built.path)}

    # A machine with an H200 (sm90) is told before anything is read or built.
    refused = child("open_engine", weights, H200)
    assert refused["error"] == "EngineTargetError"
    for named in ("sm90", "NVIDIA H200", "sm86, sm89, sm120", "TensorRT-RTX cannot build"):
        assert named in refused["message"]
    # ... and may still prepare the entry for the GPUs it is for: the same, reused.
    assert child("prepare_engine", weights, H200) == {"built": False, "path": str(built.path)}

    assert list(engine_cache.glob("example-*.engine")) == [built.path]
    assert built.path.read_bytes() == recorded


def test_a_gpu_the_backend_can_target_is_told_which_setting_to_change(
    engine_cache: Path, weights: Path
):
    refused = child("open_engine", weights, RTX_2080)
    assert refused["error"] == "EngineTargetError"
    assert "sm75" in refused["message"]
    assert "Add 'sm75' to BuilderSettings.targets" in refused["message"]
    assert list(engine_cache.glob("*.engine")) == []


def test_the_backends_default_targets_serve_the_gpus_they_name(engine_cache: Path, weights: Path):
    # No targets declared: TensorRT-RTX's default set (sm80, sm86, sm89, sm120) is built once
    # here and reused by a described sm120 machine.
    prepared = prepare_engine(
        make_graph(weights), DECLARATION, name="example", graph_version="1", weights=[weights],
        io=IO,
    )  # fmt: skip
    rtx_5090 = {"name": "NVIDIA GeForce RTX 5090", "compute_capability": "12.0"}
    assert child("open_engine", weights, rtx_5090, "-") == {
        "built": False,
        "path": str(prepared.path),
    }


def test_a_hardware_compatibility_level_is_refused_for_rtx_before_the_graph_runs(
    engine_cache: Path, weights: Path
):
    declaration = replace(
        DECLARATION, settings=BuilderSettings(hardware_compatibility="ampere_plus")
    )
    with pytest.raises(ValueError, match=r"hardware_compatibility='ampere_plus'.*targets"):
        prepare_engine(
            raising_graph, declaration, name="example", graph_version="1", weights=[weights],
            io=IO,
        )  # fmt: skip
    assert list(engine_cache.glob("*.engine")) == []

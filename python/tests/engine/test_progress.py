"""Build progress through the backend's IProgressMonitor, and cancelling (real TensorRT builds)."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from engine_helpers import DECLARATION, IO, make_graph, write_weights

import tensoracle
from tensoracle import BuildCancelledError, ProgressEvent


def _prepare(tmp_path: Path, **options: object) -> tensoracle.PreparedEngine:
    weights = write_weights(tmp_path / "model.safetensors")
    return tensoracle.prepare_engine(
        make_graph(weights),
        DECLARATION,
        name="progress",
        graph_version="1",
        weights=[weights],
        io=IO,
        **options,  # type: ignore[arg-type]
    )


def test_a_progress_function_receives_nested_phases_and_steps(engine_cache: Path, tmp_path: Path):
    events: list[ProgressEvent] = []
    prepared = _prepare(tmp_path, progress=events.append)
    assert prepared.built
    starts = [event for event in events if event.kind == "start"]
    finishes = [event for event in events if event.kind == "finish"]
    steps = [event for event in events if event.kind == "step"]
    assert starts[0].depth == 0
    assert starts[0].parent is None
    assert any(event.depth >= 2 and event.parent for event in starts), starts
    assert len(finishes) == len(starts)
    assert all(1 <= event.step <= event.steps for event in steps)
    assert finishes[-1].phase == starts[0].phase
    assert finishes[-1].seconds > 0


def test_progress_never_changes_the_identity(engine_cache: Path, tmp_path: Path):
    first = _prepare(tmp_path, progress=False)
    again = _prepare(tmp_path, progress=lambda event: None)
    assert first.built
    assert not again.built
    assert again.path == first.path


def test_off_a_terminal_at_most_one_log_line_per_phase(
    engine_cache: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch
):
    monkeypatch.setenv("TENSORACLE_PROGRESS", "log")
    events: list[ProgressEvent] = []
    with caplog.at_level(logging.INFO, logger="tensoracle.progress"):
        tensoracle.build_serialized_engine(
            make_graph(write_weights(tmp_path / "w.safetensors")), DECLARATION
        )
    lines = [record for record in caplog.records if record.name == "tensoracle.progress"]
    assert lines
    assert "Building engine" in lines[-1].getMessage()
    # The same build reports its phases to a function: one line per phase at most.
    tensoracle.build_serialized_engine(
        make_graph(write_weights(tmp_path / "w.safetensors")), DECLARATION, progress=events.append
    )
    assert len(lines) == len([event for event in events if event.kind == "start"])


def test_invalid_progress_values_are_refused(monkeypatch, tmp_path: Path):
    graph = make_graph(write_weights(tmp_path / "w.safetensors"))
    with pytest.raises(ValueError, match="progress must be"):
        tensoracle.build_serialized_engine(graph, DECLARATION, progress="yes")  # type: ignore[arg-type]
    monkeypatch.setenv("TENSORACLE_PROGRESS", "loud")
    with pytest.raises(ValueError, match="TENSORACLE_PROGRESS='loud'"):
        tensoracle.build_serialized_engine(graph, DECLARATION)


def test_stop_cancels_the_build_and_leaves_nothing(engine_cache: Path, tmp_path: Path):
    def stop_at_first_step(event: ProgressEvent) -> str | None:
        return "stop" if event.kind == "step" else None

    with pytest.raises(BuildCancelledError, match="stop"):
        _prepare(tmp_path, progress=stop_at_first_step)
    assert not any(
        path.name.endswith(".engine") or ".tmp-" in path.name for path in engine_cache.iterdir()
    )
    # The identity lock was released: the next build takes it and saves the entry.
    assert _prepare(tmp_path, progress=False).built


# A long real build (a deep MLP for one target) run by a child process; a second child waits on
# the same identity's lock.
_CHILD = textwrap.dedent(
    """
    import os, sys, time
    import numpy as np
    import tensoracle
    from tensoracle import EngineBuild, EngineIO, InputShape, TensorSpec
    trt = tensoracle.backend().module
    marker = sys.argv[1]
    def graph(network):
        x = network.add_input("x", trt.float32, (1, 16))
        rng = np.random.default_rng(0)
        for _ in range(int(sys.argv[2])):
            w = network.add_constant((16, 16), (rng.random((16, 16)) * 0.01).astype(np.float32))
            y = network.add_matrix_multiply(x, trt.MatrixOperation.NONE, w.get_output(0),
                                            trt.MatrixOperation.NONE)
            x = network.add_activation(y.get_output(0), trt.ActivationType.TANH).get_output(0)
        x.name = "y"
        network.mark_output(x)
    paused = []
    def progress(event):
        # At the first nested phase the build is inside TensorRT; it pauses there (in TensorRT's
        # own callback, so the build is really running) until the test lets it go on, so that the
        # interrupt lands in the build however fast this machine builds.
        if event.kind == "start" and event.depth >= 2 and not paused:
            paused.append(True)
            open(marker, "a").close()
            deadline = time.monotonic() + 120
            while not os.path.exists(marker + ".go") and time.monotonic() < deadline:
                time.sleep(0.01)
    started = time.monotonic()
    prepared = tensoracle.prepare_engine(
        graph, EngineBuild(inputs={"x": InputShape.fixed((1, 16))}), name="deep",
        graph_version="1", weights=[], progress=progress,
        io=EngineIO(inputs={"x": TensorSpec(trt.float32, (1, 16))},
                    outputs={"y": TensorSpec(trt.float32, (1, 16))}))
    print("built" if prepared.built else "reused", round(time.monotonic() - started, 2), flush=True)
    """
)


def test_ctrl_c_cancels_a_real_build_and_a_waiting_process_builds(
    engine_cache: Path, tmp_path: Path
):
    environment = {
        **os.environ,
        "XDG_CACHE_HOME": str(engine_cache.parent),
        "TENSORACLE_RTX_TARGETS": "sm89",
    }
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    marker_a, marker_b = tmp_path / "a-building", tmp_path / "b-building"

    def start(marker: Path) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, str(script), str(marker), "150"],
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    first = start(marker_a)
    deadline = time.monotonic() + 120
    while not marker_a.exists():
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "the first build never reached its nested phases"
        time.sleep(0.05)
    Path(f"{marker_b}.go").touch()  # the second process never pauses
    second = start(marker_b)
    time.sleep(1.5)
    assert first.poll() is None, "the first build ended before it could be interrupted"
    assert not marker_b.exists(), "the second process built without waiting for the lock"
    sent = time.monotonic()
    first.send_signal(signal.SIGINT)
    time.sleep(0.2)  # the interrupt is in; TensorRT's build goes on to its next step
    Path(f"{marker_a}.go").touch()
    _out, err = first.communicate(timeout=60)
    latency = time.monotonic() - sent
    print(f"cancel latency: {latency:.2f} s")
    assert first.returncode in (-signal.SIGINT, 130, 1), err
    assert "KeyboardInterrupt" in err
    assert latency < 3.0
    assert not any(path.name.endswith(".engine") for path in engine_cache.iterdir())
    out, err = second.communicate(timeout=300)
    assert second.returncode == 0, err
    assert out.startswith("built"), out
    names = sorted(path.name for path in engine_cache.iterdir())
    assert [name for name in names if name.endswith(".engine")] == [
        name for name in names if name.startswith("deep-") and name.endswith(".engine")
    ]
    assert len([name for name in names if name.endswith(".engine")]) == 1
    assert not [name for name in names if ".tmp-" in name]
    assert marker_b.exists()

"""Runs examples/demo.py end to end, as `make demo` does, in a private cache directory."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import tensoracle
from tensoracle import gpu

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo.py"


def test_demo_builds_reuses_in_a_second_process_and_reports_execution(tmp_path: Path):
    result = subprocess.run(
        [sys.executable, str(DEMO), "--cache-home", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    output = result.stdout
    assert "built=True" in output
    assert "graph calls in the first process: 1" in output
    assert "second process: built=False" in output
    assert "graph calls in the second process: 0" in output
    assert "3. list the cache" in output
    saved = list((tmp_path / "tensoracle").glob("simple_model-*.engine"))
    assert len(saved) == 1
    assert str(saved[0]) in output
    if gpu.absent_reason() is not None:
        assert "skipped execution and comparison: no GPU here" in output
    else:  # executed and matched, or said plainly why the backend cannot run it here
        assert "MISMATCH" not in output
        assert "executed with" in output or "skipped execution:" in output


def test_a_gpu_the_backend_cannot_build_for_is_a_skipped_execution_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    # On an H100 or H200, TensorRT-RTX's engine is not built for sm90: opening it raises
    # EngineTargetError (a ValueError). The demo's execution step says so and goes on. The GPU
    # and the open are stand-ins here (a GPU present, the open refusing as it does there).
    spec = importlib.util.spec_from_file_location("tensoracle_demo", DEMO)
    assert spec is not None
    assert spec.loader is not None
    demo = importlib.util.module_from_spec(spec)
    monkeypatch.syspath_prepend(str(DEMO.parent))
    spec.loader.exec_module(demo)
    monkeypatch.setattr(demo.gpu, "absent_reason", lambda: None)

    def refused() -> None:
        raise tensoracle.EngineTargetError("the engine is built for sm89; this GPU is sm90")

    monkeypatch.setattr(demo, "open_simple", refused)

    assert demo.execute() is True
    assert "skipped execution: the backend cannot run the engine here: the engine is built" in (
        capsys.readouterr().out
    )

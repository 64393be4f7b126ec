"""Runs examples/demo.py end to end, as `make demo` does, in a private cache directory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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

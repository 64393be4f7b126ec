"""A broken install cannot pass: where no TensorRT backend imports, the tests that need one fail,
and skip (with the reason) only under ``--without-backend`` (support/backend_requirement.py).

Each case runs a tiny suite in a child pytest that loads this suite's conftest.py: one module
imports engine_helpers (as the engine tests do), one test carries the ``backend`` marker. The
backend's import is made to fail by modules named ``tensorrt`` and ``tensorrt_rtx`` that raise
ImportError, placed first on the child's path.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

HELPER_MODULE = """\
import engine_helpers


def test_uses_the_helpers():
    assert engine_helpers.trt is not None
"""

MARKED_MODULE = """\
import pytest


@pytest.mark.backend
def test_marked():
    pass
"""


def run_tiny_suite(root: Path, *options: str, blocked: bool) -> subprocess.CompletedProcess[str]:
    suite = root / "suite"
    suite.mkdir(exist_ok=True)
    (suite / "test_helper_user.py").write_text(HELPER_MODULE)
    (suite / "test_marked.py").write_text(MARKED_MODULE)
    (root / "pytest.ini").write_text("[pytest]\nmarkers =\n    backend: needs a backend\n")
    path = [str(TESTS)]
    if blocked:
        blocker = root / "blocker"
        blocker.mkdir(exist_ok=True)
        for name in ("tensorrt", "tensorrt_rtx"):
            (blocker / f"{name}.py").write_text(
                f"raise ImportError('{name} blocked by test_backend_requirement')\n"
            )
        path.insert(0, str(blocker))
    env = {key: value for key, value in os.environ.items() if key != "TENSORACLE_BACKEND"}
    env["PYTHONPATH"] = os.pathsep.join(path)
    command = [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider"]
    command += ["-c", str(root / "pytest.ini"), "--rootdir", str(root), "-rA", *options]
    command.append("--continue-on-collection-errors")  # the marked test runs after the error
    return subprocess.run(
        [*command, str(suite)], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )


def test_missing_backend_fails_the_run(tmp_path: Path) -> None:
    result = run_tiny_suite(tmp_path, blocked=True)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    for expected in (
        "ERROR collecting suite/test_helper_user.py",
        "ERROR suite/test_marked.py::test_marked - Failed: needs a TensorRT backend",
        "2 errors",
        "tensorrt_rtx blocked by test_backend_requirement",
        "so this is a broken install; run pytest with --without-backend",
    ):
        assert expected in output, output
    for unexpected in ("skipped", "passed"):
        assert unexpected not in output, output


def test_without_backend_option_skips_with_the_reason(tmp_path: Path) -> None:
    result = run_tiny_suite(tmp_path, "--without-backend", blocked=True)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    for expected in (
        "2 skipped",
        "SKIPPED [2]",
        "needs a TensorRT backend: tensoracle needs TensorRT or TensorRT-RTX",
        "tensorrt_rtx blocked by test_backend_requirement",
        "(--without-backend)",
    ):
        assert expected in output, output
    for unexpected in ("failed", "error"):
        assert unexpected not in output.lower(), output


@pytest.mark.backend
def test_installed_backend_runs_the_tests(tmp_path: Path) -> None:
    result = run_tiny_suite(tmp_path, blocked=False)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "2 passed" in output, output

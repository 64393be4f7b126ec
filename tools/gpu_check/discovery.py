"""What to run, found in the checkout: GPU benchmarks, documentation-example tests, CTest's GPU tests.

Nothing here is a fixed list of tests: new GPU tests are found by their pytest marker `gpu` or
CTest label `gpu`, and new benchmarks by name or by bench/run.py's set of GPU-only benchmarks.
"""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path


def gpu_benchmarks(bench: Path) -> list[Path]:
    """Benchmarks that need a GPU: a name containing 'gpu', or listed in run.py's GPU_ONLY."""
    listed: set[str] = set()
    runner = bench / "run.py"
    if runner.is_file():
        for node in ast.walk(ast.parse(runner.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Assign)
                and any(
                    isinstance(t, ast.Name) and t.id == "GPU_ONLY" for t in node.targets
                )
                and isinstance(node.value, (ast.Set, ast.List, ast.Tuple))
            ):
                listed |= {
                    element.value
                    for element in node.value.elts
                    if isinstance(element, ast.Constant)
                    and isinstance(element.value, str)
                }
    return sorted(
        script
        for script in bench.glob("*.py")
        if script.name != "run.py" and ("gpu" in script.stem or script.stem in listed)
    )


def docs_example_tests(tests: Path) -> list[Path]:
    """The test files that run the README's and the guides' examples (`test_*docs*.py`, in the
    folders of the tests' parts too)."""
    return sorted(tests.rglob("test_*docs*.py"))


def ctest_gpu_executables(
    ctest: str, build: Path, *, timeout: float = 120
) -> list[str]:
    """The executables of the tests labelled `gpu` in a configured CTest build directory.

    Raises:
        RuntimeError: ctest could not list the tests (with its exit code and output).
    """
    listed = subprocess.run(
        [ctest, "--test-dir", str(build), "-L", "gpu", "--show-only=json-v1"],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if listed.returncode != 0:
        raise RuntimeError(
            f"ctest --show-only in {build} exited {listed.returncode}: {listed.stderr.strip()}"
        )
    names: list[str] = []
    for test in json.loads(listed.stdout).get("tests", []):
        command = test.get("command") or []
        if command and Path(command[0]).name not in names:
            names.append(Path(command[0]).name)
    return names

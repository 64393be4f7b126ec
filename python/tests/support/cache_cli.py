"""Helpers for the end-to-end tests of the installed `tensoracle cache` command."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from engine_files import write_engine

DAY_NS = 86_400 * 10**9
NOW_NS = time.time_ns()


def tensoracle_executable() -> str:
    scripts = Path(sys.executable).parent
    found = shutil.which("tensoracle", path=str(scripts))
    assert found is not None, f"the tensoracle command is not installed in {scripts}"
    return found


def run(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tensoracle_executable(), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def cache_list(directory: Path) -> dict[str, Any]:
    completed = run("cache", "list", "--cache-dir", str(directory))
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def prune(directory: Path, *args: str) -> tuple[int, dict[str, Any], dict[str, Any]]:
    """Runs prune; returns the exit status, the plan and the result (two JSON lines)."""
    completed = run("cache", "prune", "--cache-dir", str(directory), *args)
    lines = completed.stdout.splitlines()
    assert len(lines) == 2, (completed.stdout, completed.stderr)
    first, second = (json.loads(line) for line in lines)
    assert list(first) == ["plan"]
    assert list(second) == ["result"]
    return completed.returncode, first["plan"], second["result"]


def names(entries: list[dict[str, Any]]) -> list[str]:
    return [entry["file_name"] for entry in entries]


def engine(
    directory: Path, name: str, *, mtime_ns: int, plan_size: int = 100, **extra: Any
) -> Path:
    conditions = {"name": name, "graph_version": "1", **extra}
    return write_engine(directory, conditions, plan=b"p" * plan_size, mtime_ns=mtime_ns)

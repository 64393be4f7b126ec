"""Runs every benchmark in this directory, one process each, and prints a summary.

Usage: .venv/bin/python bench/run.py [NAME ...]   (names without .py; default: all)
Each script prints its own ratio against the baseline it measures in the same run. GPU-only
benchmarks (enqueue, open_engine_gpu) are skipped on machines where no CUDA device is usable.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
GPU_ONLY = {"enqueue", "open_engine_gpu"}


def gpu_absent_reason() -> str | None:
    """Why no CUDA device can be used here, or None (asks the driver through tensoracle)."""
    from tensoracle import gpu

    return gpu.absent_reason()


def main(names: list[str]) -> int:
    scripts = sorted(p for p in HERE.glob("*.py") if p.name != "run.py")
    if names:
        unknown = sorted(set(names) - {p.stem for p in scripts})
        if unknown:
            print(f"unknown benchmark(s): {', '.join(unknown)}", file=sys.stderr)
            return 2
        scripts = [p for p in scripts if p.stem in names]
    no_gpu = gpu_absent_reason()
    failures: list[str] = []
    for script in scripts:
        print(f"=== {script.stem}", flush=True)
        if script.stem in GPU_ONLY and no_gpu is not None:
            print(f"skipped: needs a GPU ({no_gpu})", flush=True)
            continue
        started = time.perf_counter()
        result = subprocess.run([sys.executable, str(script)], check=False)
        print(
            f"--- {script.stem}: exit {result.returncode}, {time.perf_counter() - started:.1f} s"
        )
        if result.returncode != 0:
            failures.append(script.stem)
    if failures:
        print(f"failed: {', '.join(failures)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

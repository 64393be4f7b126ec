"""Runs every benchmark in this directory, one process each, and prints a summary.

Usage: .venv/bin/python bench/run.py [--quick] [NAME ...]   (names without .py; default: all)
Each script prints its own ratio against the baseline it measures in the same run. GPU-only
benchmarks (enqueue, open_engine_gpu) are skipped on machines where no CUDA device is usable.
With --quick every script runs in its quick mode (small sizes, one repeat): a check that each
benchmark still runs end to end and prints its ratio, in a few minutes; its figures are not
measurements. The exit status is 1 if any script failed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
GPU_ONLY = {"enqueue", "open_engine_gpu"}


def scripts() -> list[Path]:
    """Every benchmark script: the .py files of this directory except this one."""
    return sorted(p for p in HERE.glob("*.py") if p.name != "run.py")


def gpu_absent_reason() -> str | None:
    """Why no CUDA device can be used here, or None (asks the driver through tensoracle)."""
    from tensoracle import gpu

    return gpu.absent_reason()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run")
    parser.add_argument(
        "--quick", action="store_true", help="run every script in its quick mode"
    )
    options = parser.parse_args(argv)
    chosen = scripts()
    if options.names:
        unknown = sorted(set(options.names) - {p.stem for p in chosen})
        if unknown:
            print(f"unknown benchmark(s): {', '.join(unknown)}", file=sys.stderr)
            return 2
        chosen = [p for p in chosen if p.stem in options.names]
    no_gpu = gpu_absent_reason()
    extra = ["--quick"] if options.quick else []
    failures: list[str] = []
    summary: list[str] = []
    run_started = time.perf_counter()
    for script in chosen:
        print(f"=== {script.stem}", flush=True)
        if script.stem in GPU_ONLY and no_gpu is not None:
            print(f"skipped: needs a GPU ({no_gpu})", flush=True)
            summary.append(f"{script.stem:20s} skipped (needs a GPU)")
            continue
        started = time.perf_counter()
        result = subprocess.run([sys.executable, str(script), *extra], check=False)
        elapsed = time.perf_counter() - started
        print(
            f"--- {script.stem}: exit {result.returncode}, {elapsed:.1f} s", flush=True
        )
        summary.append(
            f"{script.stem:20s} exit {result.returncode:3d} {elapsed:7.1f} s"
        )
        if result.returncode != 0:
            failures.append(script.stem)
    mode = "quick mode" if options.quick else "full run"
    print(f"=== summary ({mode}, {time.perf_counter() - run_started:.1f} s in all)")
    for line in summary:
        print(line)
    if failures:
        print(f"failed: {', '.join(failures)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

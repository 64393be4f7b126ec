"""Times `tensoracle cache list` on 100,000 saved engines against `find -printf '%s'`.

Run: .venv/bin/python bench/cache_list.py [--entries N] [--repeats R] [--quick]
Both commands read the same temporary directory (warm page cache); the baseline only walks the
directory and prints sizes, the command also reads and validates every header and the weight
records. Prints the best and median wall times, the ratio, the CPU count and whether the goals
are met: under 1 s for 100,000 entries (scaled to the count asked for) and at most 5x find.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness
from engine_files import sha256_hex, write_engine, write_weight_record

GOAL_SECONDS_PER_100K = 1.0
GOAL_RATIO = 5.0


def populate(directory: Path, entries: int) -> None:
    weights = []
    for index in range(10):
        weight_file = directory.parent / f"weights-{index}.safetensors"
        weight_file.write_bytes(bytes([index]) * 64)
        digest = sha256_hex(weight_file.read_bytes())
        write_weight_record(directory, weight_file, digest)
        weights.append(digest)
    for index in range(entries):
        conditions = {
            "name": f"model{index % 50}",
            "graph_version": str(index),
            "weights": [weights[index % 10]],
            "inputs": {
                "features": {"min": [1, 1, 2], "opt": [1, 64, 2], "max": [1, 448, 2]}
            },
            "builder": {"optimization_level": 3, "tf32": False},
            "gpu": {
                "name": "NVIDIA H200",
                "compute_capability": [9, 0],
                "total_memory": 1 << 37,
            },
            "os": "linux",
            "machine": "x86_64",
            "tensorrt": "11.0.0",
        }
        write_engine(
            directory,
            conditions,
            references={"workspace_limit": None},
            plan=index.to_bytes(4, "little") * 64,
        )


def timed(command: list[str], repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = harness.parse(parser, {"entries": 200, "repeats": 1})
    scripts = Path(sys.executable).parent
    tensoracle = shutil.which("tensoracle", path=str(scripts)) or shutil.which(
        "tensoracle"
    )
    if tensoracle is None:
        sys.exit("the tensoracle command is not installed (make python)")
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary) / "cache"
        directory.mkdir()
        populate(directory, args.entries)
        listing = [tensoracle, "cache", "list", "--cache-dir", str(directory)]
        baseline = ["find", str(directory), "-type", "f", "-printf", "%s\n"]
        subprocess.run(
            listing, stdout=subprocess.DEVNULL, check=True
        )  # warm the page cache
        ours = timed(listing, args.repeats)
        theirs = timed(baseline, args.repeats)
    best, median = min(ours), statistics.median(ours)
    base_best, base_median = min(theirs), statistics.median(theirs)
    print(f"entries: {args.entries}, repeats: {args.repeats}")
    print(f"tensoracle cache list: best {best:.3f} s, median {median:.3f} s")
    print(f"find -printf '%s':     best {base_best:.3f} s, median {base_median:.3f} s")
    ratio = best / base_best
    goal_seconds = GOAL_SECONDS_PER_100K * args.entries / 100_000
    print(f"cpu count: {os.cpu_count()}; load average: {os.getloadavg()[0]:.2f}")
    print(f"ratio (best/best): {ratio:.1f}x find")
    print(f"goal < {goal_seconds:.3g} s: {'met' if best < goal_seconds else 'NOT met'}")
    print(
        f"goal <= {GOAL_RATIO:g}x find: {'met' if ratio <= GOAL_RATIO else 'NOT met'}"
    )


if __name__ == "__main__":
    main()

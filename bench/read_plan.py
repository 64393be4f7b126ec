"""Benchmark: open and verify a 1 GiB saved plan through the bindings vs `cat FILE > /dev/null`.

Both read a warm page cache. The store maps the file, checks the header, computes the plan's
SHA-256 and then the plan is touched once, as TensorRT does when it deserializes it. Goal: at most
1.5x the time of cat. Run: .venv/bin/python bench/read_plan.py [--gib N] [--repeats N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from tensoracle import _core


def best_of(repeats: int, run: object) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--gib", type=float, default=1.0, help="plan size in GiB (default 1)"
    )
    parser.add_argument(
        "--repeats", type=int, default=5, help="best of N runs (default 5)"
    )
    args = parser.parse_args()
    size = int(args.gib * (1 << 30)) // 8 * 8

    directory = Path(tempfile.mkdtemp(prefix="tensoracle-bench-"))
    try:
        store = _core.Store(str(directory))
        identity = _core.make_identity(
            json.dumps({"name": "bench", "graph_version": "1"})
        )
        plan = np.random.default_rng(0).integers(0, 256, size, dtype=np.uint8)
        path = store.save(identity, "{}", plan)
        del plan
        subprocess.run(
            f"cat '{path}' > /dev/null", shell=True, check=True
        )  # warm the cache

        def read_and_touch() -> None:
            saved = store.read(identity)
            assert saved is not None
            # One pass over every byte, like TensorRT copying the plan out of the buffer.
            words = np.frombuffer(saved.plan, dtype=np.uint64)
            np.bitwise_xor.reduce(words)

        def cat() -> None:
            subprocess.run(f"cat '{path}' > /dev/null", shell=True, check=True)

        saved = store.read(identity)
        assert saved is not None

        def sha256_only() -> None:
            hashlib.sha256(saved.plan).digest()

        ours = best_of(args.repeats, read_and_touch)
        baseline = best_of(args.repeats, cat)
        floor = best_of(args.repeats, sha256_only)
        gib = size / (1 << 30)
        print(f"plan: {gib:.2f} GiB, best of {args.repeats}")
        print(f"Store.read + verify + one pass: {ours:.3f} s ({gib / ours:.2f} GiB/s)")
        print(
            f"cat FILE > /dev/null:           {baseline:.3f} s ({gib / baseline:.2f} GiB/s)"
        )
        print(
            f"hashlib.sha256 of the mapped plan alone: {floor:.3f} s (the verification floor)"
        )
        print(f"ratio (ours / cat): {ours / baseline:.2f}x (goal <= 1.5x)")
        print(f"ratio (ours / SHA-256 alone): {ours / floor:.2f}x")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()

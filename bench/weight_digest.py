"""Benchmark: first digest of a 2 GiB weight file, tensoracle vs hashlib.sha256 streaming it.

"First" means no usable record (force=True), so the file is read and hashed. Both read a warm
page cache. Goal: speed at least 1x that of hashlib (ratio hashlib / ours >= 1).
Run: .venv/bin/python bench/weight_digest.py [--gib N] [--repeats N] [--quick]
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import tempfile
import time
from pathlib import Path

import harness
import numpy as np
from tensoracle import _core


def hashlib_digest(path: Path) -> str:
    digest = hashlib.sha256()
    buffer = bytearray(1 << 20)
    view = memoryview(buffer)
    with path.open("rb", buffering=0) as stream:
        while count := stream.readinto(buffer):
            digest.update(view[:count])
    return digest.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--gib", type=float, default=2.0, help="file size in GiB (default 2)"
    )
    parser.add_argument(
        "--repeats", type=int, default=3, help="best of N runs (default 3)"
    )
    args = harness.parse(parser, {"gib": 1 / 64, "repeats": 1})
    size = int(args.gib * (1 << 30))

    directory = Path(tempfile.mkdtemp(prefix="tensoracle-bench-"))
    try:
        weights = directory / "model.safetensors"
        rng = np.random.default_rng(0)
        with weights.open("wb") as out:
            for offset in range(0, size, 1 << 28):
                rng.integers(
                    0, 256, min(1 << 28, size - offset), dtype=np.uint8
                ).tofile(out)
        cache = str(directory / "cache")
        expected = hashlib_digest(weights)  # also warms the page cache

        ours_times, baseline_times = [], []
        for _ in range(args.repeats):
            start = time.perf_counter()
            sha, from_record = _core.weight_digest(cache, str(weights), force=True)
            ours_times.append(time.perf_counter() - start)
            assert (sha, from_record) == (expected, False)
            start = time.perf_counter()
            assert hashlib_digest(weights) == expected
            baseline_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        assert _core.weight_digest(cache, str(weights)) == (expected, True)
        cached = time.perf_counter() - start

        ours, baseline = min(ours_times), min(baseline_times)
        gib = size / (1 << 30)
        print(f"weight file: {gib:.2f} GiB, best of {args.repeats}")
        print(
            f"tensoracle weight_digest (first): {ours:.3f} s ({gib / ours:.2f} GiB/s)"
        )
        print(
            f"hashlib.sha256 streaming:         {baseline:.3f} s ({gib / baseline:.2f} GiB/s)"
        )
        print(f"speed ratio (hashlib time / ours): {baseline / ours:.2f}x (goal >= 1x)")
        print(f"later call answered by the record: {cached * 1e3:.2f} ms")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()

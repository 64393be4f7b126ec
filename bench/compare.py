"""Benchmark: compare_outputs against one plain pass over both arrays' bytes, and against the
straightforward NumPy float64 computation.

A float16 candidate against a float32 reference (100 million elements by default, about 3 GB of
memory with the NumPy baseline's temporaries). The plain pass is NumPy's integer sum of each
array's bytes read as 64-bit words: what reading both arrays once costs, the memory limit.
compare_outputs runs with the first pass the CPU gets (``avx512`` or ``avx2``) and
with the portable one (``TENSORACLE_COMPARE_KERNEL=portable``); both must agree with NumPy to 1e-12
relative, and with the portable pass bit for bit (the AVX-512 pass, which adds in eight lanes,
to 1e-14 relative). Prints each time, the ratio of the default pass to the
plain pass (goal: at most 1.5x) and the speed-up over NumPy.

    python bench/compare.py [--elements N] [--repeats R] [--quick]
"""

from __future__ import annotations

import argparse
import math
import os
import time
from typing import Any

import harness
import numpy as np
from tensoracle import compare_outputs
from tensoracle.compare.measure import compare_kernel

ATOL = 1e-3
RTOL = 1e-3
GOAL = 1.5


def plain_pass(*arrays: np.ndarray) -> int:
    """One read of every array's bytes: an integer sum of 64-bit words."""
    total = 0
    for array in arrays:
        data = array.reshape(-1).view(np.uint8)
        total += int(data[: len(data) // 8 * 8].view(np.uint64).sum())
    return total


def numpy_compare(
    candidate: np.ndarray, reference: np.ndarray
) -> dict[str, float | int]:
    """The same fields as compare_outputs, written the obvious way in float64 NumPy."""
    c = candidate.astype(np.float64)
    r = reference.astype(np.float64)
    error = np.abs(c - r)
    return {
        "candidate_nonfinite_count": int(np.count_nonzero(~np.isfinite(c))),
        "reference_nonfinite_count": int(np.count_nonzero(~np.isfinite(r))),
        "max_absolute_error": float(np.max(error)),
        "relative_l2_error": float(
            np.sqrt(np.sum(error * error)) / np.sqrt(np.sum(r * r))
        ),
        "cosine_similarity": float(
            np.sum(c * r) / (np.sqrt(np.sum(c * c)) * np.sqrt(np.sum(r * r)))
        ),
        "outside_tolerance_count": int(
            np.count_nonzero(~(error <= ATOL + RTOL * np.abs(r)))
        ),
    }


def best_time(function, repeats: int) -> tuple[float, object]:
    best, result = math.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=100_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    arguments = harness.parse(parser, {"elements": 1_000_000, "repeats": 1})

    rng = np.random.default_rng(0)
    reference = rng.standard_normal(arguments.elements, dtype=np.float32)
    noise = rng.standard_normal(arguments.elements, dtype=np.float32) * np.float32(1e-3)
    candidate = (reference + noise).astype(np.float16)
    del noise

    kernel = compare_kernel(candidate, reference)
    # The passes measured: the one the CPU gets, AVX2 too where that is AVX-512, and the portable
    # one, each chosen as a user would (TENSORACLE_COMPARE_KERNEL).
    passes = [kernel, *(["avx2"] if kernel == "avx512" else []), "portable"]

    def run(pass_name: str) -> Any:
        os.environ["TENSORACLE_COMPARE_KERNEL"] = pass_name
        try:
            assert compare_kernel(candidate, reference) == pass_name
            return compare_outputs(candidate, reference, atol=ATOL, rtol=RTOL)
        finally:
            del os.environ["TENSORACLE_COMPARE_KERNEL"]

    # Rounds interleave the measurements, so that a slow moment of the machine hits all alike.
    plain_seconds = math.inf
    seconds = dict.fromkeys(passes, math.inf)
    results: dict[str, Any] = {}
    for _ in range(arguments.repeats):
        plain_seconds = min(
            plain_seconds, best_time(lambda: plain_pass(candidate, reference), 1)[0]
        )
        for pass_name in passes:
            start = time.perf_counter()
            results[pass_name] = run(pass_name)
            elapsed = time.perf_counter() - start
            seconds[pass_name] = min(seconds[pass_name], elapsed)
    numpy_seconds, expected = best_time(
        lambda: numpy_compare(candidate, reference), arguments.repeats
    )
    ours = results[kernel]
    for name, value in expected.items():
        got = getattr(ours, name)
        for pass_name in passes:
            other = getattr(results[pass_name], name)
            assert math.isclose(other, got, rel_tol=1e-14), (
                pass_name,
                name,
                other,
                got,
            )
        if isinstance(value, int):
            assert got == value, (name, got, value)
        else:
            assert math.isclose(got, value, rel_tol=1e-12), (name, got, value)

    ratio = seconds[kernel] / plain_seconds
    verdict = "met" if ratio <= GOAL else "NOT met"
    print(f"elements: {arguments.elements:,} (float16 candidate, float32 reference)")
    print(f"cpu count: {os.cpu_count()}; load average: {os.getloadavg()[0]:.2f}")
    print(f"best of {arguments.repeats} interleaved rounds")
    print(f"plain pass over both arrays: {plain_seconds:.3f} s")
    for pass_name in passes:
        print(
            f"compare_outputs, {pass_name + ' pass:':15s} {seconds[pass_name]:.3f} s "
            f"({seconds[pass_name] / plain_seconds:.2f}x the plain pass)"
        )
    print(f"numpy float64 baseline:      {numpy_seconds:.3f} s")
    print(
        "results agree with NumPy to 1e-12 relative, and every pass to 1e-14: "
        f"{ours.summary()}"
    )
    print(f"goal: the {kernel} pass <= {GOAL}x the plain pass: {ratio:.2f}x, {verdict}")
    print(f"speed-up over NumPy: {numpy_seconds / seconds[kernel]:.2f}x")


if __name__ == "__main__":
    main()

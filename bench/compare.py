"""Benchmark: compare_outputs against the straightforward NumPy float64 computation.

A float16 candidate against a float32 reference (100 million elements by default, about 3 GB of
memory with the NumPy baseline's temporaries). Both compute the same fields in the same run; the
script checks that they agree to 1e-12 relative and prints the speed ratio.

    python bench/compare.py [--elements N] [--repeats R] [--quick]
"""

from __future__ import annotations

import argparse
import math
import os
import time

import harness
import numpy as np
from tensoracle import compare_outputs

ATOL = 1e-3
RTOL = 1e-3


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

    ours_seconds, ours = best_time(
        lambda: compare_outputs(candidate, reference, atol=ATOL, rtol=RTOL),
        arguments.repeats,
    )
    numpy_seconds, expected = best_time(
        lambda: numpy_compare(candidate, reference), arguments.repeats
    )
    for name, value in expected.items():
        got = getattr(ours, name)
        if isinstance(value, int):
            assert got == value, (name, got, value)
        else:
            assert math.isclose(got, value, rel_tol=1e-12), (name, got, value)

    print(f"elements: {arguments.elements:,} (float16 candidate, float32 reference)")
    print(f"cpu count: {os.cpu_count()}; load average: {os.getloadavg()[0]:.2f}")
    print(
        f"tensoracle compare_outputs: {ours_seconds:.3f} s (best of {arguments.repeats})"
    )
    print(
        f"numpy float64 baseline:     {numpy_seconds:.3f} s (best of {arguments.repeats})"
    )
    print(f"results agree to 1e-12 relative: {ours.summary()}")
    print(f"speed-up: {numpy_seconds / ours_seconds:.2f}x")


if __name__ == "__main__":
    main()

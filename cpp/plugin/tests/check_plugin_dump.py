"""Compares what ``plugin_probe --gpu DUMP_DIR`` wrote with NumPy references.

Usage: ``python check_plugin_dump.py DUMP_DIR``. One line per check; exits 1 if any fails. Needs
only NumPy, so it runs where neither tensoracle nor TensorRT's Python bindings are installed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

# The probe's passes: the first context alone, both contexts at once (one thread each), and the
# second context again after the first was destroyed.
PASSES = ("ctx0_", "thread0_", "thread1_", "after_")
DOT_CASES = ("dot_k1024", "dot_k1000", "dot_k1024_misaligned")
ALPHA = np.float32(-2.5)


def main(directory: Path) -> int:
    failures = 0

    def load(name: str) -> np.ndarray:
        return np.fromfile(directory / f"{name}.f32", dtype=np.float32)

    def report(name: str, error: float, limit: float) -> None:
        nonlocal failures
        ok = error <= limit
        failures += not ok
        print(
            f"{'ok  ' if ok else 'FAIL'} {name}: max abs error {error:.3g} (limit {limit:.3g})"
        )

    for tag in PASSES:
        x, bias = load(f"{tag}bias_x"), load(f"{tag}bias_b")
        expected = (x.reshape(-1, bias.size) + bias).ravel()
        report(
            f"{tag}TensoracleBiasAdd",
            float(np.abs(load(f"{tag}bias_out") - expected).max()),
            1e-6,
        )
        scaled = ALPHA * load(f"{tag}scale_x")
        report(
            f"{tag}TensoracleScale",
            float(np.abs(load(f"{tag}scale_out") - scaled).max()),
            1e-6,
        )
        for case in DOT_CASES:
            out = load(f"{tag}{case}_out")
            a = load(f"{tag}{case}_a").astype(np.float64).reshape(out.size, -1)
            b = load(f"{tag}{case}_b").astype(np.float64).reshape(out.size, -1)
            error = float(np.abs(out - (a * b).sum(axis=1)).max())
            report(f"{tag}TensoracleRowDot {case}", error, 1e-3)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1])))

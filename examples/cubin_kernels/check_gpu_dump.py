"""Checks the outputs cubin_runtime_gpu_test dumped (TENSORACLE_GPU_DUMP) against NumPy.

Usage: ``python check_gpu_dump.py DUMP_DIR``. Prints one line per check; exits 1 if any fails.
Needs only NumPy, so it runs on a GPU machine without tensoracle installed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np


def main(directory: Path) -> int:
    def load(name: str) -> np.ndarray:
        return np.fromfile(directory / f"{name}.f32", dtype=np.float32)

    failures = 0

    def report(name: str, error: float, limit: float) -> None:
        nonlocal failures
        ok = error <= limit
        failures += not ok
        print(
            f"{'ok  ' if ok else 'FAIL'} {name}: max abs error {error:.3g} (limit {limit:.3g})"
        )

    x, bias = load("bias_add_x"), load("bias_add_bias")
    rows = x.size // bias.size
    expected = x.reshape(rows, bias.size) + bias
    report(
        "bias_add", float(np.abs(load("bias_add_out") - expected.ravel()).max()), 1e-6
    )
    report("scale", float(np.abs(load("scale_out") - np.float32(-2.5) * x).max()), 1e-6)
    for name in ("row_dot_div16_k1024", "row_dot_k1024", "row_dot_k1000"):
        a, b = (
            load(f"{name}_a").astype(np.float64),
            load(f"{name}_b").astype(np.float64),
        )
        out = load(f"{name}_out")
        reference = (a.reshape(out.size, -1) * b.reshape(out.size, -1)).sum(axis=1)
        report(name, float(np.abs(out - reference).max()), 1e-3)
    m, n, k = 96, 80, 200
    a = load("matmul_a").astype(np.float64).reshape(m, k)
    b = load("matmul_b").astype(np.float64).reshape(k, n)
    reference = (a @ b).ravel()
    ieee = float(np.abs(load("matmul_ieee_out") - reference).max())
    tf32 = float(np.abs(load("matmul_tf32_out") - reference).max())
    report("matmul_ieee", ieee, 1e-4)
    report("matmul_tf32", tf32, 5e-2)
    distinct = tf32 > 10 * ieee
    failures += not distinct
    print(
        f"{'ok  ' if distinct else 'FAIL'} tf32 control distinguishable: {tf32:.3g} > 10 x {ieee:.3g}"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1])))

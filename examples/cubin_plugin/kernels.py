"""The example plugin's four kernels, declared as 1.x ``KernelSpec`` records.

The Triton functions are those of the repository's example kernel set
(``examples/cubin_kernels/kernels.py``); this file fixes how the plugin uses them. ``plugin.cpp``
asks the bundle for ``"sm<SM>.<name>"`` and relies on these names, argument orders and
constants: ``BLOCK`` 256 for bias_add and scale (their one-dimensional launch grids), and for the row dot a variant
that assumes 16-divisible pointers and length next to one that assumes nothing, chosen per launch.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cubin_kernels"))

from kernels import bias_add, row_dot, scale
from tensoracle.producer import KernelSpec

ROW_DOT_SIGNATURE = (
    ("a_ptr", "*fp32"),
    ("b_ptr", "*fp32"),
    ("out_ptr", "*fp32"),
    ("k", "i32"),
)

KERNELS: tuple[KernelSpec, ...] = (
    KernelSpec(
        "bias_add",
        bias_add,
        (
            ("x_ptr", "*fp32"),
            ("bias_ptr", "*fp32"),
            ("out_ptr", "*fp32"),
            ("n", "i32"),
            ("n_cols", "i32"),
        ),
        {"BLOCK": 256},
    ),
    KernelSpec(
        "scale",
        scale,
        (("x_ptr", "*fp32"), ("out_ptr", "*fp32"), ("n", "i32"), ("alpha", "fp32")),
        {"BLOCK": 256},
    ),
    KernelSpec(
        "row_dot_div16",
        row_dot,
        ROW_DOT_SIGNATURE,
        {"BLOCK": 512},
        {"a_ptr": 16, "b_ptr": 16, "out_ptr": 16, "k": 16},
    ),
    KernelSpec("row_dot", row_dot, ROW_DOT_SIGNATURE, {"BLOCK": 512}),
)

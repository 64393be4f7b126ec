"""The example kernel set: bias add, scale, a row-wise dot product in a variant specialised for
multiples of 16 and an unspecialised one, and a matrix product with TF32 allowed or IEEE fp32
(the TF32 control). ``KERNELS`` lists the KernelSpec records the producer compiles."""

from __future__ import annotations

import triton
import triton.language as tl
from tensoracle.producer import KernelSpec

BLOCK = 256
DOT_BLOCK = 512
TILE = 32


@triton.jit
def bias_add(x_ptr, bias_ptr, out_ptr, n, n_cols, BLOCK: tl.constexpr):
    """out[i] = x[i] + bias[i % n_cols] over n elements of row-major (rows, n_cols) data;
    grid ceil(n / BLOCK)."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    bias = tl.load(bias_ptr + offsets % n_cols, mask=mask)
    tl.store(out_ptr + offsets, x + bias, mask=mask)


@triton.jit
def scale(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    """out[i] = alpha * x[i]; grid ceil(n / BLOCK)."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, alpha * tl.load(x_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def row_dot(a_ptr, b_ptr, out_ptr, k, BLOCK: tl.constexpr):
    """out[r] = sum_j a[r, j] * b[r, j] for row-major (rows, k) inputs; grid (rows,)."""
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, k, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        mask = offsets < k
        a = tl.load(a_ptr + row * k + offsets, mask=mask, other=0.0)
        b = tl.load(b_ptr + row * k + offsets, mask=mask, other=0.0)
        acc += a * b
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, m, n, k, PRECISION: tl.constexpr, TILE: tl.constexpr):
    """c = a @ b for row-major fp32 matrices; grid (ceil(m / TILE), ceil(n / TILE))."""
    rows = tl.program_id(0) * TILE + tl.arange(0, TILE)
    cols = tl.program_id(1) * TILE + tl.arange(0, TILE)
    acc = tl.zeros((TILE, TILE), dtype=tl.float32)
    for start in range(0, k, TILE):
        inner = start + tl.arange(0, TILE)
        a = tl.load(
            a_ptr + rows[:, None] * k + inner[None, :],
            mask=(rows[:, None] < m) & (inner[None, :] < k),
            other=0.0,
        )
        b = tl.load(
            b_ptr + inner[:, None] * n + cols[None, :],
            mask=(inner[:, None] < k) & (cols[None, :] < n),
            other=0.0,
        )
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(
        c_ptr + rows[:, None] * n + cols[None, :],
        acc,
        mask=(rows[:, None] < m) & (cols[None, :] < n),
    )


_ROW_DOT_SIGNATURE = (
    ("a_ptr", "*fp32"),
    ("b_ptr", "*fp32"),
    ("out_ptr", "*fp32"),
    ("k", "i32"),
)
_MATMUL_SIGNATURE = (
    ("a_ptr", "*fp32"),
    ("b_ptr", "*fp32"),
    ("c_ptr", "*fp32"),
    ("m", "i32"),
    ("n", "i32"),
    ("k", "i32"),
)

KERNELS: list[KernelSpec] = [
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
        {"BLOCK": BLOCK},
    ),
    KernelSpec(
        "scale",
        scale,
        (("x_ptr", "*fp32"), ("out_ptr", "*fp32"), ("n", "i32"), ("alpha", "fp32")),
        {"BLOCK": BLOCK},
    ),
    KernelSpec(
        "row_dot_div16",
        row_dot,
        _ROW_DOT_SIGNATURE,
        {"BLOCK": DOT_BLOCK},
        divisible_by={"a_ptr": 16, "b_ptr": 16, "out_ptr": 16, "k": 16},
    ),
    KernelSpec("row_dot", row_dot, _ROW_DOT_SIGNATURE, {"BLOCK": DOT_BLOCK}),
    # PRECISION is a string constexpr: Triton's tl.dot takes the precision by name.
    KernelSpec(
        "matmul_tf32", matmul, _MATMUL_SIGNATURE, {"PRECISION": "tf32", "TILE": TILE}
    ),
    KernelSpec(
        "matmul_ieee", matmul, _MATMUL_SIGNATURE, {"PRECISION": "ieee", "TILE": TILE}
    ),
]

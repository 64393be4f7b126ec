"""The example plugin's kernels: the bias add, scale and both row dot variants of the repository's
example kernel set (``examples/cubin_kernels/kernels.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cubin_kernels"))

from kernels import KERNELS as _ALL

NAMES = ("bias_add", "scale", "row_dot_div16", "row_dot")
KERNELS = [spec for spec in _ALL if spec.name in NAMES]

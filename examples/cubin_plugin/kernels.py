"""The example plugin's four kernels: 1.x ``KernelSpec`` records of the repository's example
kernel set (``examples/cubin_kernels/kernels.py``), picked by name.

``plugin.cpp`` asks the bundle for ``"sm<SM>.<name>"`` and relies on these names, argument orders
and constants: ``BLOCK`` 256 for bias_add and scale (their one-dimensional launch grids), and for
the row dot a variant that assumes 16-divisible pointers and length next to one that assumes
nothing, chosen per launch.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cubin_kernels"))

from kernels import KERNELS as _ALL

NAMES = ("bias_add", "scale", "row_dot_div16", "row_dot")
KERNELS: tuple = tuple(spec for spec in _ALL if spec.name in NAMES)

"""Times a full build of the example cubin bundle against plain Triton compilation of the same
kernels and targets (the baseline), and prints the producer's overhead ratio.

Run: ``.venv/bin/python bench/cubin_bundle_build.py``. No GPU needed. Each side is measured
``--repeats`` times and the best time is kept; on a shared machine the numbers are indicative only.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "examples" / "cubin_kernels"))

from kernels import KERNELS
from tensoracle.producer import DEFAULT_TARGETS, compile_bundle, find_tool


def plain_triton(targets: list[int], cache: Path) -> float:
    """The baseline: triton.compile for every spec and target, nothing else."""
    import triton
    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    start = time.perf_counter()
    with knobs.nvidia.scope(), knobs.cache.scope(), knobs.compilation.scope():
        knobs.nvidia.ptxas = str(find_tool("ptxas"))
        knobs.nvidia.ptxas_blackwell = str(find_tool("ptxas"))
        knobs.cache.dir = str(cache)
        knobs.compilation.always_compile = True
        knobs.compilation.disable_line_info = True
        for spec in KERNELS:
            names = list(spec.fn.arg_names)
            signature = {name: spec.signature.get(name, "constexpr") for name in names}
            attrs = {
                (names.index(n),): [["tt.divisibility", 16]] for n in spec.divisibility
            }
            for sm in targets:
                source = ASTSource(spec.fn, signature, dict(spec.constants), attrs)
                triton.compile(
                    source,
                    target=GPUTarget("cuda", sm, 32),
                    options={
                        "num_warps": spec.num_warps,
                        "num_stages": spec.num_stages,
                    },
                )
    return time.perf_counter() - start


def producer(targets: list[int], out: Path) -> float:
    start = time.perf_counter()
    compile_bundle(KERNELS, out, targets=targets, overwrite=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    targets = list(DEFAULT_TARGETS)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        baseline = min(
            plain_triton(targets, root / f"cache{i}") for i in range(args.repeats)
        )
        bundle = min(producer(targets, root / "bundle") for _ in range(args.repeats))
    cubins = len(KERNELS) * len(targets)
    print(f"{len(KERNELS)} kernels x {len(targets)} targets = {cubins} cubins")
    print(f"baseline (plain triton.compile): {baseline:.2f} s")
    print(f"compile_bundle (checks, cuobjdump, manifest, bundle.cpp): {bundle:.2f} s")
    print(f"ratio compile_bundle / baseline: {bundle / baseline:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Times a full build of the example cubin bundle (6 kernels x 6 targets) three ways, in one run:
plain serial Triton compilation of the same pairs (the baseline), ``compile_bundle(jobs=1)`` (the
serial build) and ``compile_bundle`` with ``--jobs`` worker processes (default: the CPU count).
Prints the producer's overhead against plain Triton and the parallel build against the serial
one (goal: at most 0.6 on 2 cores), and checks that both builds wrote the same bytes.

Run: ``.venv/bin/python bench/cubin_bundle_build.py [--repeats 3] [--jobs N] [--quick]``. No GPU
needed. Each side is measured ``--repeats`` times and the best time is kept; on a shared machine
the numbers are indicative only.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import harness

sys.path.insert(0, str(harness.ROOT / "examples" / "cubin_kernels"))

from kernels import KERNELS
from tensoracle.producer import compile_bundle, find_tool
from tensoracle.producer.checks import SUPPORTED_TARGETS


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
            names = list(spec.function.arg_names)
            types = dict(spec.signature)
            signature = {name: types.get(name, "constexpr") for name in names}
            attrs = {
                (names.index(n),): [["tt.divisibility", d]]
                for n, d in spec.divisible_by.items()
                if d > 1
            }
            for sm in targets:
                source = ASTSource(
                    spec.function, signature, dict(spec.constexprs), attrs
                )
                triton.compile(
                    source,
                    target=GPUTarget("cuda", sm, 32),
                    options={
                        "num_warps": spec.num_warps,
                        "num_stages": spec.num_stages,
                    },
                )
    return time.perf_counter() - start


def producer(targets: list[int], out: Path, jobs: int) -> float:
    start = time.perf_counter()
    compile_bundle(KERNELS, out, targets=tuple(targets), jobs=jobs)  # writes into `out`
    return time.perf_counter() - start


def same_files(a: Path, b: Path) -> bool:
    names = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    if names != sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file()):
        return False
    return all((a / name).read_bytes() == (b / name).read_bytes() for name in names)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    args = harness.parse(parser, {"repeats": 1})
    targets = list(SUPPORTED_TARGETS)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        baseline = min(
            plain_triton(targets, root / f"cache{i}") for i in range(args.repeats)
        )
        serial = min(producer(targets, root / "serial", 1) for _ in range(args.repeats))
        parallel = min(
            producer(targets, root / "parallel", args.jobs) for _ in range(args.repeats)
        )
        identical = same_files(root / "serial", root / "parallel")
    cubins = len(KERNELS) * len(targets)
    print(f"{len(KERNELS)} kernels x {len(targets)} targets = {cubins} cubins")
    print(f"baseline (plain triton.compile, serial): {baseline:.2f} s")
    print(
        f"compile_bundle jobs=1 (checks, cuobjdump, manifest, bundle.cpp): {serial:.2f} s"
    )
    print(f"compile_bundle jobs={args.jobs}: {parallel:.2f} s")
    print(f"ratio compile_bundle jobs=1 / baseline: {serial / baseline:.2f}")
    print(
        f"ratio compile_bundle jobs={args.jobs} / jobs=1: {parallel / serial:.2f} (goal <= 0.6)"
    )
    print(f"parallel bundle byte-identical to the serial one: {identical}")
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Compiles the example kernel set into a bundle directory: ``python build.py OUT_DIR``.

By default it builds every SM the producer supports (80, 86, 89, 90, 100, 120), so the bundle
runs on the A100, H100/H200 and B200 class GPUs of the core's GPU runtime test as well as on the
1.x targets.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kernels import KERNELS
from tensoracle.producer import SUPPORTED_TARGETS, compile_bundle


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument(
        "--targets", type=int, nargs="+", default=list(SUPPORTED_TARGETS)
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="remove OUT_DIR first (without it, files of other bundles in OUT_DIR are kept)",
    )
    parser.add_argument(
        "--jobs", type=int, default=None, help="worker processes (default: CPUs)"
    )
    args = parser.parse_args()
    if args.overwrite and args.out_dir.exists():
        shutil.rmtree(args.out_dir)
    start = time.perf_counter()
    manifest = compile_bundle(
        tuple(KERNELS), args.out_dir, targets=tuple(args.targets), jobs=args.jobs
    )
    seconds = time.perf_counter() - start
    print(
        f"{args.out_dir}: {len(manifest['entries'])} cubins, bundle "
        f"{manifest['bundle_sha256']}, {seconds:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

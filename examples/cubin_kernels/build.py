"""Compiles the example kernel set into a bundle directory: ``python build.py OUT_DIR``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kernels import KERNELS
from tensoracle.producer import DEFAULT_TARGETS, compile_bundle


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--targets", type=int, nargs="+", default=list(DEFAULT_TARGETS))
    parser.add_argument("--overwrite", action="store_true")
    args = parser.parse_args()
    start = time.perf_counter()
    bundle = compile_bundle(
        KERNELS, args.out_dir, targets=args.targets, overwrite=args.overwrite
    )
    seconds = time.perf_counter() - start
    cubins = sum(len(kernel["cubins"]) for kernel in bundle.manifest["kernels"])
    print(
        f"{bundle.directory}: {cubins} cubins, bundle {bundle.sha256}, {seconds:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

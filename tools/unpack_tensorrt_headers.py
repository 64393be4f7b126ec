"""Unpacks only the TensorRT headers of a downloaded kernel-lens wheel into an SDK include folder.

Usage: ``python tools/unpack_tensorrt_headers.py WHEEL_DIR INCLUDE_DIR`` (called by ``make
tensorrt-headers``). Nothing else of the wheel is written, and nothing is installed.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

PREFIX = "kernel_lens/include/tensorrt/"


def main(wheel_dir: Path, include: Path) -> int:
    wheels = sorted(wheel_dir.glob("*.whl"))
    if len(wheels) != 1:
        print(
            f"expected one wheel in {wheel_dir}, found {len(wheels)}", file=sys.stderr
        )
        return 1
    with zipfile.ZipFile(wheels[0]) as wheel:
        names = [
            n for n in wheel.namelist() if n.startswith(PREFIX) and not n.endswith("/")
        ]
        if not names:
            print(f"{wheels[0].name} holds no {PREFIX}", file=sys.stderr)
            return 1
        include.mkdir(parents=True, exist_ok=True)
        for name in names:
            target = include / name[len(PREFIX) :]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(wheel.read(name))
    print(f"{len(names)} TensorRT headers from {wheels[0].name} in {include}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1]), Path(sys.argv[2])))

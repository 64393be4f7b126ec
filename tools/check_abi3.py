"""Checks that a stable-ABI (abi3) wheel's extensions use only CPython's limited API.

Usage: python tools/check_abi3.py WHEEL

A `cp312-abi3` wheel is installed by every CPython from 3.12 on, so each extension in it must use
only the limited API of 3.12. The script checks that:

1. the wheel's file name has the ABI tag `abi3`;
2. it holds at least one extension, and each one (a `.so` file outside the `*.libs/` folder that
   auditwheel adds) is named `*.abi3.so`, the suffix every CPython 3 imports; a
   `*.cpython-312-*.so` would be found by 3.12 only;
3. abi3audit (PyPI `abi3audit`, pinned in python/requirements-test.txt), reading each extension's
   dynamic symbols from the local file, finds no C API symbol outside the limited API and none
   that the limited API only gained after the wheel's Python tag.

It prints, per extension, the Python version whose limited API it needs. Exit status 1 when a
check fails.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any


def tag_problems(wheel: Path) -> list[str]:
    """What is wrong with the file name and the names of the extensions in it."""
    parts = wheel.name.removesuffix(".whl").split("-")
    if len(parts) < 5 or parts[-2] != "abi3":
        return [f"{wheel.name}: the ABI tag is not abi3"]
    with zipfile.ZipFile(wheel) as archive:
        extensions = [
            name
            for name in archive.namelist()
            if name.endswith(".so") and not name.split("/")[0].endswith(".libs")
        ]
    if not extensions:
        return [f"{wheel.name}: holds no extension"]
    return [
        f"{name}: not named *.abi3.so, so CPython versions other than the builder's ignore it"
        for name in extensions
        if not name.endswith(".abi3.so")
    ]


def audit(wheel: Path) -> dict[str, Any]:
    """abi3audit's JSON report of `wheel`: one result per extension."""
    done = subprocess.run(
        [sys.executable, "-m", "abi3audit", "--strict", "--report", str(wheel)],
        capture_output=True,
        text=True,
        check=False,
    )
    if not done.stdout.strip():
        raise SystemExit(
            f"abi3audit {wheel} gave no report ({done.returncode}): {done.stderr}"
        )
    specs: dict[str, dict[str, Any]] = json.loads(done.stdout)["specs"]
    (report,) = specs.values()
    return report


def symbol_problems(report: dict[str, Any]) -> list[str]:
    """What abi3audit found outside the limited API of the wheel's Python tag."""
    found: list[str] = []
    for extension in report["wheel"]:
        result = extension["result"]
        name = extension["name"]
        print(f"  {name}: needs the limited API of {result['computed']}")
        if result["non_abi3_symbols"]:
            symbols = ", ".join(sorted(result["non_abi3_symbols"]))
            found.append(f"{name}: uses C API outside the limited API: {symbols}")
        if not result["is_abi3_baseline_compatible"]:
            newer = ", ".join(
                f"{symbol} ({version})"
                for symbol, version in sorted(result["future_abi3_objects"].items())
            )
            found.append(
                f"{name}: uses limited API newer than {result['baseline']}: {newer}"
            )
    return found


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    wheel = Path(sys.argv[1])
    found = tag_problems(wheel)
    if not found:
        print(f"{wheel.name}:")
        found = symbol_problems(audit(wheel))
    for problem in found:
        print(problem, file=sys.stderr)
    if not found:
        print(f"{wheel.name}: every extension uses only the limited API of its tag")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())

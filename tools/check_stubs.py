"""Checks (or rewrites) the checked-in type stub of the extension, python/src/tensoracle/_core.pyi.

The stub is nanobind's stub generator run on the installed ``tensoracle._core``, then put in the
repository's style by ruff (imports sorted, formatted with the project's ruff settings), under a
header saying so. `make lint` runs this after `make python` and fails when the checked-in file
differs from a fresh one, that is when a binding changed without its stub.

    .venv/bin/python tools/check_stubs.py          # check (exit 1 with a diff when stale)
    .venv/bin/python tools/check_stubs.py --write  # regenerate the checked-in stub
"""

from __future__ import annotations

import argparse
import difflib
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STUB = Path("python/src/tensoracle/_core.pyi")
MODULE = "tensoracle._core"
HEADER = (
    f"# Generated from the installed {MODULE} by tools/check_stubs.py --write (nanobind.stubgen,\n"
    "# then ruff); do not edit. `make lint` checks that it matches the bindings.\n"
)
REGENERATE = "make python && .venv/bin/python tools/check_stubs.py --write"


def _ruff(arguments: list[str], text: str) -> str:
    """``text`` passed through ruff on stdin, as if it were the checked-in stub."""
    ruff = Path(sys.executable).parent / "ruff"
    done = subprocess.run(
        [str(ruff), *arguments, "--stdin-filename", str(STUB), "-"],
        input=text,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"check_stubs: ruff {' '.join(arguments)} failed:\n{done.stderr}")
    return done.stdout


def generate() -> str:
    """The stub nanobind writes for the installed extension, in the repository's style."""
    with tempfile.TemporaryDirectory() as scratch:
        output = Path(scratch) / "_core.pyi"
        # Run outside the repository so that `tensoracle` is the installed package.
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "nanobind.stubgen",
                "-q",
                "-m",
                MODULE,
                "-o",
                str(output),
            ],
            capture_output=True,
            text=True,
            cwd=scratch,
            check=False,
        )
        if done.returncode != 0:
            sys.exit(
                f"check_stubs: nanobind.stubgen failed for {MODULE} (is the package installed? "
                f"run `make python`):\n{done.stdout}{done.stderr}"
            )
        text = output.read_text(encoding="utf-8")
    text = _ruff(["check", "--fix-only", "--quiet"], text)
    text = _ruff(["format", "--quiet"], text)
    return HEADER + "\n" + text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--write", action="store_true", help="rewrite the checked-in stub"
    )
    options = parser.parse_args()
    fresh = generate()
    path = ROOT / STUB
    if options.write:
        path.write_text(fresh, encoding="utf-8")
        print(f"wrote {STUB} ({len(fresh.encode('utf-8'))} bytes)")
        return 0
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    if current == fresh:
        print(f"{STUB} matches the bindings")
        return 0
    diff = difflib.unified_diff(
        current.splitlines(keepends=True),
        fresh.splitlines(keepends=True),
        f"{STUB} (checked in)",
        f"{STUB} (generated from the installed {MODULE})",
    )
    sys.stderr.writelines(diff)
    print(
        f"\n{STUB} is out of date with the bindings in cpp/bindings; regenerate it with\n"
        f"  {REGENERATE}\nand commit the result.",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())

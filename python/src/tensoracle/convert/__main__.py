"""Command line: ``python -m tensoracle.convert SOURCE DESTINATION`` (also ``tensoracle convert``).

Exits 0 on success (silently: ``tensoracle convert`` adds its summary through ``written``), 1 when
the conversion fails (one line on stderr, ``<prog>: <reason>``, naming the key where there is one),
and 2 on misuse of the command line.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from tensoracle.convert import pth_to_safetensors


def main(
    argv: list[str] | None = None,
    prog: str = "python -m tensoracle.convert",
    *,
    written: Callable[[Path], None] | None = None,
) -> int:
    """Runs the command; ``written`` is called with the destination once it is written."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Convert a PyTorch .pth checkpoint of tensors into a safetensors file.",
    )
    parser.add_argument("source", metavar="SOURCE", help="the .pth checkpoint to read")
    parser.add_argument("destination", metavar="DESTINATION", help="the safetensors file to write")
    arguments = parser.parse_args(argv)
    try:
        pth_to_safetensors(arguments.source, arguments.destination)
    except (ImportError, OSError, TypeError, ValueError, RuntimeError) as error:
        print(f"{parser.prog}: {error}", file=sys.stderr)
        return 1
    if written is not None:
        written(Path(arguments.destination))
    return 0


if __name__ == "__main__":
    sys.exit(main())

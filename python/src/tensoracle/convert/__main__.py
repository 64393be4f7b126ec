"""Command line: ``python -m tensoracle.convert SOURCE DESTINATION`` (also ``tensoracle convert``).

Exits 0 on success, 1 when the conversion fails (one line on stderr, ``<prog>: <reason>``, naming
the key where there is one), and 2 on misuse of the command line.
"""

from __future__ import annotations

import argparse
import sys

from tensoracle.convert import pth_to_safetensors


def main(argv: list[str] | None = None, prog: str = "python -m tensoracle.convert") -> int:
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
    return 0


if __name__ == "__main__":
    sys.exit(main())

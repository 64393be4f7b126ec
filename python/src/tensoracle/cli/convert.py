"""``tensoracle convert SOURCE DESTINATION``: the checkpoint converter under the one command."""

from __future__ import annotations

from tensoracle.convert.__main__ import main as convert_main


def main(args: list[str], prog: str) -> int:
    """Converts a ``.pth`` checkpoint; exit status as ``python -m tensoracle.convert``."""
    return convert_main(args, prog)

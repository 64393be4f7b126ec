"""``tensoracle convert SOURCE DESTINATION``: the checkpoint converter under the one command,
which also says what it wrote (``python -m tensoracle.convert`` stays silent on success)."""

from __future__ import annotations

from pathlib import Path

from tensoracle.convert.__main__ import main as convert_main
from tensoracle.terminal_text import terminal_text


def summary(destination: Path) -> str:
    """``wrote PATH: N tensors, SIZE`` for the safetensors file at ``destination``."""
    from safetensors import SafetensorError, safe_open

    from tensoracle import _core

    shown = terminal_text(str(destination))
    try:
        with safe_open(destination, framework="numpy") as written:  # reads the header only
            count = len(written.keys())
        size = destination.stat().st_size
    except (OSError, SafetensorError) as error:  # replaced or removed since: say what is known
        return f"wrote {shown} (cannot read it back: {error})"
    tensors = "1 tensor" if count == 1 else f"{count} tensors"
    return f"wrote {shown}: {tensors}, {_core.format_size_human(size)}"


def main(args: list[str], prog: str) -> int:
    """Converts a ``.pth`` checkpoint; exit status as ``python -m tensoracle.convert``, and on
    success one line on stdout naming the file written, its tensors and its size."""
    return convert_main(args, prog, written=lambda destination: print(summary(destination)))

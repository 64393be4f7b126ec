"""The Python side of the ``tensoracle`` command.

The native command owns ``cache list|prune|verify`` and ``bundle inspect``. Subcommands that need
Python (TensorRT's Python modules, object-store clients) are handed over as
``python -m tensoracle.cli WORD [WORD...] ARGS``: the longest run of leading words that names a
module ``tensoracle.cli.<words joined by '_'>`` selects it, and its ``main(args, prog)`` receives
the rest and returns the exit status (0 success, 1 failure, 2 invalid usage).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Sequence

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a command ended by Ctrl-C

Main = Callable[[list[str], str], int]


def _find(words: Sequence[str]) -> tuple[Main, int] | None:
    for count in range(len(words), 0, -1):
        if not all(word.replace("-", "_").isidentifier() for word in words[:count]):
            continue
        name = f"{__name__}.{'_'.join(word.replace('-', '_') for word in words[:count])}"
        if importlib.util.find_spec(name) is None:
            continue
        module = importlib.import_module(name)
        entry = getattr(module, "main", None)
        if callable(entry):
            return entry, count
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the subcommand named by the leading words of ``argv`` and returns its exit status."""
    words = list(sys.argv[1:] if argv is None else argv)
    found = _find(words)
    if found is None:
        shown = " ".join(words[:2]) or "(none)"
        print(
            f"tensoracle: no Python subcommand named {shown!r}; run 'tensoracle --help' for the "
            "list of subcommands",
            file=sys.stderr,
        )
        return EXIT_USAGE
    entry, count = found
    prog = "tensoracle " + " ".join(words[:count])
    try:
        return entry(words[count:], prog)
    except KeyboardInterrupt:
        # Ctrl-C: what the command was doing was cut short (a download's temporary is removed on
        # the way out); the shell's convention for a command ended by SIGINT.
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED

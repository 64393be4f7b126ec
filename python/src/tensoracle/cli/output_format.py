"""``--format json|table``: the one output switch of every ``tensoracle`` command that prints data,
with the same spelling, values and help as the native commands, and the hidden ``--json`` that
``tensoracle build`` took before it (the same as ``--format json``, with a warning on stderr).
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Sequence

from tensoracle.terminal_text import terminal_text

JSON = "json"
TABLE = "table"
FORMATS = (JSON, TABLE)


class FormatError(Exception):
    """``--json`` was combined with ``--format table``."""


def format_help(default: str) -> str:
    """The help of ``--format``, the same on every command."""
    return f"Print json (for scripts) or table (for people); default: {default}"


def _format_name(value: str) -> str:
    if value not in FORMATS:
        raise argparse.ArgumentTypeError(f"'{value}' is not an output format: give json or table")
    return value


def add_format_option(
    parser: argparse.ArgumentParser, default: str, *, deprecated_json: bool = False
) -> None:
    """Adds ``--format json|table`` (read it with :func:`chosen_format`) and, with
    ``deprecated_json``, the ``--json`` flag, which the help does not show."""
    parser.add_argument(
        "--format", type=_format_name, metavar="json|table", help=format_help(default)
    )
    parser.set_defaults(format_default=default)
    if deprecated_json:
        parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)


def chosen_format(options: argparse.Namespace, prog: str) -> str:
    """The format asked for: ``--format``, else json for the deprecated ``--json`` (saying so on
    stderr), else the command's default. Raises FormatError for ``--json --format table``."""
    if getattr(options, "json", False):
        if options.format not in (None, JSON):
            raise FormatError(
                "--json (deprecated, the same as --format json) cannot be combined with "
                f"--format {options.format}"
            )
        print(f"{prog}: --json is deprecated; use --format json", file=sys.stderr)
        return JSON
    return str(options.format or options.format_default)


def one_line(text: str) -> str:
    """``text`` with every run of whitespace made one space, for a table cell."""
    return " ".join(text.split())


def aligned_rows(given: Sequence[Sequence[str]], indent: str = "") -> str:
    """Rows of cells as lines, through a rich table: columns two spaces apart, each as wide as
    its widest cell in terminal columns, never wrapped or cut, no borders or styles; trailing
    spaces removed, each line starting with ``indent`` and ending in a newline (the layout of the
    native tables). Every cell goes through terminal_text: names and reasons are not ours to let
    a terminal act on; markup is not read either."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    rows = [[terminal_text(cell) for cell in row] for row in given]
    table = Table(box=None, show_header=False, pad_edge=False, padding=(0, 1))
    for _column in rows[0]:
        table.add_column(no_wrap=True, overflow="ignore")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    widths = [max(Text(row[column]).cell_len for row in rows) for column in range(len(rows[0]))]
    screen = io.StringIO()
    # Wide enough for every row: the table is never wrapped to a terminal's width.
    console = Console(
        file=screen, width=sum(widths) + 2 * len(widths) + 1, color_system=None, emoji=False
    )
    console.print(table, highlight=False, crop=False)
    return "".join(indent + line.rstrip(" ") + "\n" for line in screen.getvalue().splitlines())

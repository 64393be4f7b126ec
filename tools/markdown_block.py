"""Prints the code block that follows ``<!-- run: NAME -->`` in a Markdown file.

Usage: ``python tools/markdown_block.py FILE NAME``. The Makefile pipes such blocks to bash, so
that the commands a README shows are the commands ``make test`` runs.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path


def block(text: str, name: str) -> str:
    pattern = rf"<!-- run: {re.escape(name)} -->\s*```[a-z]*\n(.*?)^```"
    found = re.search(pattern, text, flags=re.DOTALL | re.MULTILINE)
    if found is None:
        raise SystemExit(f"no block marked '<!-- run: {name} -->'")
    return found.group(1)


if __name__ == "__main__":
    sys.stdout.write(block(Path(sys.argv[1]).read_text(encoding="utf-8"), sys.argv[2]))

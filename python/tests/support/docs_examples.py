"""Finds the ```python blocks of the README and the guides in docs/, and runs them in order."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def python_blocks(relative_path: str) -> list[str]:
    """The python blocks of a Markdown file of the repository, in order; at least one."""
    blocks = _BLOCK.findall((REPO / relative_path).read_text(encoding="utf-8"))
    assert blocks, f"{relative_path} has no python examples"
    return blocks


def run_blocks(relative_path: str, namespace: dict[str, object] | None = None) -> dict[str, object]:
    """Executes every python block of the file in one namespace, as a reader would."""
    scope: dict[str, object] = {"__name__": "__docs__"} if namespace is None else namespace
    for number, block in enumerate(python_blocks(relative_path), start=1):
        exec(compile(block, f"{relative_path} (python block {number})", "exec"), scope)
    return scope


_LABELLED = re.compile(
    r"^(?:<!-- example: (?P<label>[\w-]+) -->\n)?```python\n(?P<code>.*?)^```",
    re.DOTALL | re.MULTILINE,
)


def labelled_blocks(relative_path: str) -> list[tuple[str | None, str]]:
    """Every python block of a Markdown file as (label, code); the label is the NAME of a
    ``<!-- example: NAME -->`` line right above the block, else None."""
    text = (REPO / relative_path).read_text(encoding="utf-8")
    blocks = [(found["label"], found["code"]) for found in _LABELLED.finditer(text)]
    assert len(blocks) == len(python_blocks(relative_path))
    return blocks


def text_blocks(relative_path: str) -> list[str]:
    """The ```text blocks of a Markdown file (expected output shown to readers), in order."""
    text = (REPO / relative_path).read_text(encoding="utf-8")
    return re.findall(r"^```text\n(.*?)^```", text, re.DOTALL | re.MULTILINE)

"""Runs the Python examples of docs/compare.md and docs/convert.md, block after block."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def python_blocks(name: str) -> list[str]:
    blocks = _BLOCK.findall((DOCS / name).read_text(encoding="utf-8"))
    assert blocks, f"{name} has no python examples"
    return blocks


@pytest.mark.parametrize(
    ("name", "needs"),
    [("compare.md", None), ("convert.md", "torch")],
)
def test_documented_examples_run(name, needs, tmp_path, monkeypatch):
    if needs is not None:
        pytest.importorskip(needs, reason=f"the examples of {name} need {needs}")
    monkeypatch.chdir(tmp_path)  # examples write their files into a scratch directory
    namespace: dict = {"__name__": f"docs_{name.removesuffix('.md')}"}
    for number, block in enumerate(python_blocks(name), start=1):
        code = compile(block, f"{name} (python block {number})", "exec")
        exec(code, namespace)

"""Runs every ```python block of docs/engines.md and docs/backends.md, in order, as a user would."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


@pytest.mark.parametrize("page", ["engines.md", "backends.md"])
def test_documented_examples_run(page, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    blocks = BLOCK.findall((DOCS / page).read_text())
    assert blocks, f"{page} has no python examples"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for number, block in enumerate(blocks, start=1):
        code = compile(block, f"{page} block {number}", "exec")
        exec(code, namespace)
    printed = capsys.readouterr().out
    if page == "engines.md":
        assert "plan of" in printed
        assert "'dtype'" in printed
        assert list((tmp_path / "cache" / "tensoracle").glob("example-*.engine"))

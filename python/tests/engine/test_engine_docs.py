"""Runs every ```python block of docs/engines.md and docs/backends.md, in order, as a user would."""

from __future__ import annotations

from pathlib import Path

import pytest
from docs_examples import run_blocks
from engine_helpers import skip_where_the_gpu_is_refused


@pytest.mark.parametrize("page", ["engines.md", "backends.md"])
def test_documented_examples_run(page, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    if page == "engines.md":
        skip_where_the_gpu_is_refused()  # its examples use the handle that open_engine returns
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    run_blocks(f"docs/{page}")
    printed = capsys.readouterr().out
    if page == "engines.md":
        assert "plan of" in printed
        assert "'dtype'" in printed
        assert list((tmp_path / "cache" / "tensoracle").glob("example-*.engine"))

"""Runs the Python examples of the README and of docs/compare.md and docs/convert.md (each page
skips, with the reason, where a package its examples need is not installed)."""

from __future__ import annotations

import pytest
from docs_examples import run_blocks


@pytest.mark.parametrize(
    ("page", "needs"),
    [
        pytest.param("README.md", None, marks=pytest.mark.backend),
        ("docs/compare.md", "matplotlib"),
        ("docs/convert.md", "torch"),
    ],
)
def test_documented_examples_run(page, needs, tmp_path, monkeypatch, capsys):
    if needs is not None:
        pytest.importorskip(needs, reason=f"the examples of {page} need {needs}")
    monkeypatch.chdir(tmp_path)  # examples write their files into a scratch directory
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    run_blocks(page)
    if page == "README.md":
        printed = capsys.readouterr().out
        assert "built" in printed  # the first prepare_engine call builds the example engine
        assert list((tmp_path / "cache" / "tensoracle").glob("example-*.engine"))

"""Runs docs/precision.md as a reader would.

Without a GPU: every block except those labelled ``gpu-...`` runs, which builds and saves the
fp32, fp16, bf16, int8 and fp8 engines; the test then checks each saved IO signature, the
targets, the printed output shown on the page, the refusal of fp8 for the default targets, and
reuse without the graph. With a GPU the backend can run, the ``gpu-...`` blocks also run the
engines and compare every precision with fp32.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from docs_examples import labelled_blocks, text_blocks
from engine_files import header
from engine_helpers import raising_graph, skip_where_the_gpu_is_refused

import tensoracle

PAGE = "docs/precision.md"
PRECISIONS = ("fp32", "fp16", "bf16", "int8", "fp8")


def skip_where_nothing_can_be_built() -> None:
    chosen = tensoracle.backend()
    if chosen.name == "tensorrt" and tensoracle.gpu.absent_reason() is not None:
        pytest.skip(f"TensorRT 11 builds only on a GPU: {tensoracle.gpu.absent_reason()}")
    skip_where_the_gpu_is_refused()


def run(blocks: list[str], scope: dict[str, Any]) -> dict[str, Any]:
    for number, code in enumerate(blocks, start=1):
        exec(compile(code, f"{PAGE} (block {number})", "exec"), scope)
    return scope


def cpu_blocks() -> list[str]:
    return [code for label, code in labelled_blocks(PAGE) if not (label or "").startswith("gpu-")]


def one_line(text: str) -> str:
    return " ".join(text.split())


def test_the_page_has_cpu_and_gpu_blocks_and_nothing_else():
    labels = [label for label, _code in labelled_blocks(PAGE)]
    assert labels.count(None) == 4  # weights, graph, build, refusal
    assert [label for label in labels if label is not None] == ["gpu-run", "gpu-compare"]
    for number, (_label, code) in enumerate(labelled_blocks(PAGE), start=1):
        compile(code, f"{PAGE} (block {number})", "exec")  # the GPU blocks at least parse here


def test_every_precision_is_built_saved_and_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    skip_where_nothing_can_be_built()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TENSORACLE_RTX_TARGETS", raising=False)
    scope = run(cpu_blocks(), {"__name__": "__docs__"})
    chosen = tensoracle.backend()
    handles = scope["handles"]
    assert tuple(handles) == PRECISIONS
    for precision, handle in handles.items():
        assert handle.built, precision
        tensors = {t["name"]: t for t in handle.references["io"]["tensors"]}
        assert set(tensors) == {"features", "logits"}
        assert (tensors["features"]["mode"], tensors["features"]["dtype"]) == ("INPUT", "FLOAT")
        assert tensors["features"]["shape"] == [8, 64]
        assert tensors["features"]["profile"] == {"min": [8, 64], "opt": [8, 64], "max": [8, 64]}
        assert (tensors["logits"]["mode"], tensors["logits"]["dtype"]) == ("OUTPUT", "FLOAT")
        assert tensors["logits"]["shape"] == [8, 32]
        saved = header(handle.path)
        assert saved["references"]["io"] == handle.references["io"]
        assert saved["conditions"]["name"] == f"dense-{precision}"
    saved_files = sorted(path.name for path in (tmp_path / "cache" / "tensoracle").glob("*.engine"))
    assert saved_files == sorted(handle.path.name for handle in handles.values())

    printed = capsys.readouterr().out
    if chosen.name == "tensorrt_rtx":
        defaults = ["sm80", "sm86", "sm89", "sm120"]
        for precision, handle in handles.items():
            expected = ["sm89", "sm120"] if precision == "fp8" else defaults
            assert header(handle.path)["conditions"]["targets"] == expected, precision
        fp8_line, refusal = (one_line(block) for block in text_blocks(PAGE))
        lines = printed.splitlines()
        assert fp8_line in lines  # the output shown on the page is what the code prints
        assert one_line(refusal) in lines  # and so is the refusal message, word for word
    for precision in PRECISIONS:
        assert any(line.startswith(f"{precision} [") for line in printed.splitlines())

    # "A second run reuses the five saved engines without calling the graph functions."
    scope["dense_graph"] = lambda precision: raising_graph
    build_block = next(code for code in cpu_blocks() if "handles = {" in code)
    run([build_block], scope)
    assert all(not handle.built for handle in scope["handles"].values())


@pytest.mark.gpu
def test_every_precision_runs_and_is_compared_with_fp32(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    skip_where_nothing_can_be_built()
    pytest.importorskip("cupy", reason="the page runs the engines with CuPy")
    pytest.importorskip("matplotlib", reason="the report plots need tensoracle[plot]")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    blocks = [code for _label, code in labelled_blocks(PAGE)]
    scope = run(blocks, {"__name__": "__docs__"})
    expected = scope["sample"] @ scope["kernel"] + scope["offset"]
    np.testing.assert_allclose(scope["outputs"]["fp32"], expected, rtol=1e-5, atol=1e-5)
    comparisons = scope["comparisons"]
    assert list(comparisons) == [f"{p} vs fp32" for p in PRECISIONS if p != "fp32"]
    for comparison in comparisons.values():
        assert comparison.candidate_nonfinite_count == 0
        assert comparison.relative_l2_error is not None
        assert comparison.relative_l2_error < 0.1
    assert (tmp_path / "precision-report.html").stat().st_size > 0

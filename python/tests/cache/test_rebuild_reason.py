"""Why open_engine built again: logged, recorded in the new header, exposed on the result."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from engine_files import write_engine
from engine_helpers import DECLARATION, IO, make_graph, write_weights

import tensoracle
from tensoracle import _core


def _prepare(weights: Path, graph_version: str = "3") -> tensoracle.PreparedEngine:
    return tensoracle.prepare_engine(
        make_graph(weights),
        DECLARATION,
        name="reasoned",
        graph_version=graph_version,
        weights=[weights],
        io=IO,
        progress=False,
    )


def _header(path: Path) -> dict[str, Any]:
    data = path.read_bytes()
    length = int.from_bytes(data[12:20], "little")
    return json.loads(data[20 : 20 + length])


def test_first_build_of_a_name_has_no_reason(engine_cache: Path, tmp_path: Path):
    prepared = _prepare(write_weights(tmp_path / "model.safetensors"))
    assert prepared.built
    assert prepared.rebuild_reason is None
    assert "rebuild_reason" not in _header(prepared.path)["references"]


def test_changed_weights_are_the_reason(
    engine_cache: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    weights = write_weights(tmp_path / "model.safetensors")
    first = _prepare(weights)
    write_weights(weights, bias=(2.0, 3.0))
    with caplog.at_level(logging.INFO, logger="tensoracle.rebuild"):
        second = _prepare(weights)
    assert second.built
    assert second.path != first.path
    assert second.rebuild_reason == (
        f"weights: model.safetensors content changed (compared with {first.path.name})"
    )
    recorded = _header(second.path)["references"]["rebuild_reason"]
    assert recorded["compared_with"] == first.path.name
    assert [item["key"] for item in recorded["differences"]] == ["weights"]
    assert any("model.safetensors content changed" in r.getMessage() for r in caplog.records)


def test_a_new_graph_version_is_the_reason_and_the_handle_shows_it(
    engine_cache: Path, tmp_path: Path
):
    weights = write_weights(tmp_path / "model.safetensors")
    _prepare(weights, graph_version="3")
    handle = tensoracle.open_engine(
        make_graph(weights), DECLARATION, name="reasoned", graph_version="4",
        weights=[weights], io=IO, progress=False,
    )  # fmt: skip
    assert handle.built
    assert handle.rebuild_reason is not None
    assert handle.rebuild_reason.startswith("graph_version 3 \u2192 4 (compared with ")


def test_another_backend_version_is_the_reason(engine_cache: Path, tmp_path: Path):
    weights = write_weights(tmp_path / "model.safetensors")
    saved = _prepare(weights)
    header = _header(saved.path)
    current = header["conditions"]["backend_version"]
    # The entry as an older release would have saved it: same name, other backend_version.
    older = {**header["conditions"], "backend_version": "1.6.0.1"}
    write_engine(engine_cache, older, references=header["references"])
    saved.path.unlink()
    rebuilt = _prepare(weights)
    assert rebuilt.built
    backend = header["conditions"]["backend"]
    assert rebuilt.rebuild_reason is not None
    assert rebuilt.rebuild_reason.startswith(f"{backend} version 1.6.0.1 \u2192 {current} ")


def test_the_nearest_entry_is_the_one_with_fewest_differences(engine_cache: Path, tmp_path: Path):
    weights = write_weights(tmp_path / "model.safetensors")
    saved = _prepare(weights)
    conditions = _header(saved.path)["conditions"]
    far = {**conditions, "graph_version": "1", "optimization_level": 5}
    write_engine(engine_cache, far)
    asked = {**conditions, "graph_version": "9"}
    found = _core.nearest_entry(str(engine_cache), asked)
    assert found is not None
    assert found["compared_with"] == saved.path.name
    assert [item["description"] for item in found["differences"]] == ["graph_version 3 \u2192 9"]
    other = {**conditions, "name": "unrelated"}
    assert _core.nearest_entry(str(engine_cache), other) is None

"""open_deployed(..., plugins=...): each library checked against the SHA-256 digests the manifest
entry records (by the C++ library's verify_plugins) before any is loaded, and loaded into the
backend's real plugin registry from the sealed in-memory copy of the bytes checked, as a C++
application's tensoracle::deploy loads them.

The engines are real TensorRT-RTX builds, made in a child process so that this process's
registry holds none of their libraries until open_deployed loads them; the GPU is described
(TENSORACLE_DESCRIBED_GPU), which is all selection needs."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_plugins import SUPPORT, compile_plugin

import tensoracle
from tensoracle.cli import deploy_manifest
from tensoracle.engine import deployed

RTX_4090 = json.dumps({"name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"})

BUILD_WITH_PLUGINS = r"""
import sys
from pathlib import Path
import tensoracle
from engine_helpers import DECLARATION, IO, make_graph, write_weights
weights = write_weights(Path(sys.argv[1]))
prepared = tensoracle.prepare_engine(
    make_graph(weights), DECLARATION, name="plugged", graph_version="1", weights=[weights],
    io=IO, plugins=[Path(path) for path in sys.argv[2:]], progress=False,
)
print(prepared.path)
"""


def deployment(tmp_path: Path, libraries: list[Path]) -> tuple[Path, dict[str, Any]]:
    """A manifest of one entry, recipe "plugged", built for sm89 with ``libraries`` in another
    process (sharing this test's cache folder); returns the manifest and its entry."""
    built = subprocess.run(
        [sys.executable, "-c", BUILD_WITH_PLUGINS, str(tmp_path / "model.safetensors"),
         *map(str, libraries)],
        env={**os.environ, "PYTHONPATH": str(SUPPORT), "TENSORACLE_RTX_TARGETS": "sm89"},
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    entry = deploy_manifest.entry("plugged", "1", Path(built.stdout.strip()), None)
    assert entry["conditions"]["plugins"] == [sha256(library) for library in libraries]
    manifest = tmp_path / "deploy.json"
    deploy_manifest.write(manifest, "tests:RECIPES", None, [entry])
    return manifest, entry


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def registered(creator: str) -> list[str]:
    """The versions of ``creator`` in the backend's plugin registry."""
    registry = tensoracle.backend().module.get_plugin_registry()
    return [item.plugin_version for item in registry.all_creators if item.name == creator]


@pytest.mark.backend
def test_an_unrecorded_plugin_library_is_refused_and_nothing_is_loaded(
    tmp_path: Path, engine_cache: Path, monkeypatch: pytest.MonkeyPatch
):
    recorded = compile_plugin(tmp_path, "TensoracleDeployRecorded")
    (tmp_path / "other").mkdir()
    unrecorded = compile_plugin(tmp_path / "other", "TensoracleDeployUnrecorded")
    manifest, entry = deployment(tmp_path, [recorded])
    monkeypatch.setenv("TENSORACLE_DESCRIBED_GPU", RTX_4090)

    # The recorded library comes first and is valid: had it been loaded as it was checked, it
    # would be registered now.
    with pytest.raises(tensoracle.EngineConditionError) as refused:
        tensoracle.open_deployed(manifest, "plugged", plugins=[recorded, unrecorded])
    assert str(refused.value).startswith(
        f"plugin library '{unrecorded}' has SHA-256 {sha256(unrecorded)}, which the entry "
        f"{entry['file_name']} was not built with (its plugins: {sha256(recorded)}): pass the "
        "libraries it was built with"
    )
    assert registered("TensoracleDeployUnrecorded") == []
    assert registered("TensoracleDeployRecorded") == []

    # A recorded library none of the paths is: refused the same way, naming its digest.
    with pytest.raises(tensoracle.EngineConditionError) as missing:
        tensoracle.open_deployed(manifest, "plugged", plugins=[unrecorded])
    assert f"plugin library '{unrecorded}' has SHA-256 {sha256(unrecorded)}" in str(missing.value)
    with pytest.raises(tensoracle.EngineConditionError) as none_given:
        tensoracle.open_deployed(manifest, "plugged")
    assert str(none_given.value).startswith(
        f"the entry {entry['file_name']} was built with the plugin library of SHA-256 "
        f"{sha256(recorded)}, which none of the 0 libraries given is: pass it in plugins="
    )
    assert registered("TensoracleDeployRecorded") == []


@pytest.mark.backend
def test_a_recorded_plugin_library_is_loaded_from_the_copy_that_was_checked(
    tmp_path: Path, engine_cache: Path, monkeypatch: pytest.MonkeyPatch
):
    library = compile_plugin(tmp_path, "TensoracleDeploySealed", version="1")
    checked = library.read_bytes()
    manifest, entry = deployment(tmp_path, [library])
    (tmp_path / "next").mkdir()
    replacement = compile_plugin(tmp_path / "next", "TensoracleDeploySealed", version="2")
    monkeypatch.setenv("TENSORACLE_DESCRIBED_GPU", RTX_4090)

    # The file is replaced by another library (the same creator, version 2) once the check is
    # done and before anything is loaded: loading by path would register version 2.
    load = deployed.load_verified_plugins

    def replaced_after_the_check(verified: Any, chosen: Any, logger: Any = None) -> None:
        os.replace(replacement, library)
        load(verified, chosen, logger)

    monkeypatch.setattr(deployed, "load_verified_plugins", replaced_after_the_check)
    handle = tensoracle.open_deployed(manifest, "plugged", plugins=[library])

    assert library.read_bytes() != checked  # the file on disk is now version 2
    assert registered("TensoracleDeploySealed") == ["1"]
    assert handle.path.name == entry["file_name"]

    # Opened again (the file restored), the library is not loaded a second time: the registry
    # would refuse its creator twice.
    monkeypatch.setattr(deployed, "load_verified_plugins", load)
    library.write_bytes(checked)
    again = tensoracle.open_deployed(manifest, "plugged", plugins=[library])
    assert again.path == handle.path
    assert registered("TensoracleDeploySealed") == ["1"]

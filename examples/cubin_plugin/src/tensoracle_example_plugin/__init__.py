"""The example cubin plugin: where its native library and its bundle are in this installation."""

from __future__ import annotations

import json
from pathlib import Path

_HERE = Path(__file__).resolve().parent

LIBRARY_NAME = "libtensoracle_example_plugin.so"
PLUGIN_NAMESPACE = "tensoracle_example"
PLUGINS = ("TensoracleBiasAdd", "TensoracleScale", "TensoracleRowDot")


def library_path() -> Path:
    """The plugin library, to pass as ``plugins=[library_path()]``."""
    return _HERE / LIBRARY_NAME


def bundle_path() -> Path:
    """The cubin bundle the library was built from (for ``inspect_bundle``)."""
    return _HERE / "bundle"


def bundle_sha256() -> str:
    """The digest of the bundle compiled into the library: every plugin's ``bundle_sha256``
    field (CHAR x 64) must be this value."""
    manifest = json.loads((bundle_path() / "bundle.json").read_text(encoding="utf-8"))
    return str(manifest["bundle_sha256"])

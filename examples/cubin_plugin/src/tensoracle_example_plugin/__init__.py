"""The example cubin plugin: where its native library and its bundle are in this installation."""

from __future__ import annotations

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

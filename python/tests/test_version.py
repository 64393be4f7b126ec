"""Where a program finds the package's version: the private ``tensoracle._version`` of 1.x and the
distribution's metadata agree, and ``tensoracle.__version__`` stays undefined, as in 1.x."""

from __future__ import annotations

from importlib import metadata

import pytest

import tensoracle
from tensoracle import _version


def test_the_private_version_module_holds_the_installed_version() -> None:
    installed = metadata.version("tensoracle")
    assert _version.__version__ == _version.version == installed
    assert ".".join(str(part) for part in _version.version_tuple) == installed
    assert all(isinstance(part, int) for part in _version.__version_tuple__[:3])


def test_the_package_has_no_version_attribute() -> None:
    with pytest.raises(AttributeError):
        _ = tensoracle.__version__  # type: ignore[attr-defined]
    assert "__version__" not in dir(tensoracle)

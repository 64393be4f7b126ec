"""Native plugin libraries passed as ``plugins=``: checked, registered once, and fingerprinted.

Each library must export ``getCreators``. It is loaded through the backend's plugin registry and
kept loaded for the life of the process; the SHA-256 of its bytes at load time is remembered, and
every later call hashes the file again so that a library changed after loading is reported
instead of silently mixing old code with a new identity.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tensoracle import log
from tensoracle.backends import Backend
from tensoracle.errors import PluginLibraryError

_REQUIRED_SYMBOL = "getCreators"


@dataclass(frozen=True)
class _Loaded:
    digest: str
    backend: str
    handle: Any  # the registry's library handle, kept so the library stays loaded
    check: Any  # our own ctypes handle from the symbol check, kept for the same reason


_lock = threading.Lock()
_loaded: dict[Path, _Loaded] = {}


def _paths(plugins: Iterable[Any]) -> list[Path]:
    if isinstance(plugins, str | bytes | os.PathLike):
        raise ValueError(f"plugins must be a sequence of paths, not the single path {plugins!r}")
    paths: list[Path] = []
    for entry in plugins:
        if not isinstance(entry, str | os.PathLike) or not os.fspath(entry):
            raise ValueError(f"plugins holds {entry!r}, which is not a path")
        paths.append(Path(os.fspath(entry)))
    return paths


def _digest(path: Path) -> str:
    try:
        with path.open("rb") as stream:
            return hashlib.file_digest(stream, "sha256").hexdigest()
    except OSError as error:
        raise PluginLibraryError(
            f"plugin library '{path}' is missing or unreadable: {error.strerror or error}"
        ) from error


def _exports_get_creators(path: Path) -> Any:
    try:
        library = ctypes.CDLL(str(path))
    except OSError as error:
        raise PluginLibraryError(
            f"plugin library '{path}' cannot be loaded as a shared library: {error}"
        ) from error
    if not hasattr(library, _REQUIRED_SYMBOL):
        raise PluginLibraryError(
            f"plugin library '{path}' does not export {_REQUIRED_SYMBOL}, so it is not a "
            "TensorRT plugin library"
        )
    return library


def load_plugins(plugins: Iterable[Any], chosen: Backend, logger: Any = None) -> list[str]:
    """Checks, registers (once per process) and hashes each library; returns the SHA-256 digests
    in the given order. Raises PluginLibraryError for a missing, unreadable or incompatible
    library and for one whose bytes changed since it was loaded in this process."""
    digests: list[str] = []
    for given in _paths(plugins):
        path = given.resolve()
        digest = _digest(path)
        with _lock:
            loaded = _loaded.get(path)
            if loaded is not None:
                if loaded.digest != digest:
                    raise PluginLibraryError(
                        f"plugin library '{path}' changed after it was loaded in this process "
                        f"(SHA-256 at load {loaded.digest}, now {digest}); restart the process "
                        "to use the new library"
                    )
                if loaded.backend != chosen.name:
                    raise PluginLibraryError(
                        f"plugin library '{path}' was loaded for backend {loaded.backend}, "
                        f"not {chosen.name}"
                    )
                digests.append(digest)
                continue
            check = _exports_get_creators(path)
            log.trt_logger(chosen)  # make sure the registry logs through tensoracle's logger
            with log.capture(logger) as errors:
                handle = chosen.module.get_plugin_registry().load_library(str(path))
            if handle is None:
                raise PluginLibraryError(
                    f"{chosen.name} rejected plugin library '{path}': {log.describe(errors)}"
                )
            _loaded[path] = _Loaded(digest, chosen.name, handle, check)
        digests.append(digest)
    return digests

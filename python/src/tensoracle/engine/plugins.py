"""Native plugin libraries passed as ``plugins=``: checked, registered once, and fingerprinted.

Each library must export ``getCreators``: on Linux its ELF dynamic symbol table is read from the
file before anything is loaded, so no code of a library that is not a plugin runs. It is then
loaded through the backend's plugin registry, once per content (the same bytes at another path
are not loaded again), and kept loaded for the life of the process. The SHA-256 of its bytes at
load time is remembered; a library that changes while it loads, or after, is reported instead of
silently mixing old code with a new identity.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tensoracle import _core
from tensoracle.engine import log
from tensoracle.engine.backends import Backend
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


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise PluginLibraryError(
            f"plugin library '{path}' is missing or unreadable: {error.strerror or error}"
        ) from error


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _check_exports(path: Path, data: bytes) -> Any:
    """Refuses a library without ``getCreators``; returns what must stay referenced (None)."""
    if sys.platform.startswith("linux"):
        try:
            exported = _core.elf_exported_functions(data, str(path))
        except ValueError as error:
            raise PluginLibraryError(
                f"plugin library '{path}' is not a shared library: {error}"
            ) from error
        if _REQUIRED_SYMBOL not in exported:
            raise PluginLibraryError(
                f"plugin library '{path}' does not export {_REQUIRED_SYMBOL}, so it is not a "
                "TensorRT plugin library"
            )
        return None
    return _exports_get_creators(path)


def _exports_get_creators(path: Path) -> Any:
    """Elsewhere than Linux: the check loads the library (ctypes) and looks the symbol up."""
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
        try:
            path = given.resolve(strict=True)
        except OSError as error:
            raise PluginLibraryError(
                f"plugin library '{given}' is missing or unreadable: {error.strerror or error}"
            ) from error
        data = _read(path)
        digest = _digest(data)
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
            same = next((item for item in _loaded.values() if item.digest == digest), None)
            if same is not None and same.backend == chosen.name:
                # The same library at another path: its creators are registered already.
                _loaded[path] = same
                digests.append(digest)
                continue
            check = _check_exports(path, data)
            log.trt_logger(chosen)  # make sure the registry logs through tensoracle's logger
            with log.capture(logger) as errors:
                try:
                    handle = chosen.module.get_plugin_registry().load_library(str(path))
                except Exception as error:  # the registry's own refusal
                    errors.append(str(error))
                    handle = None
            if handle is None:
                raise PluginLibraryError(
                    f"{chosen.name} rejected plugin library '{path}': {log.describe(errors)}"
                )
            now = _digest(_read(path))
            if now != digest:
                raise PluginLibraryError(
                    f"plugin library '{path}' changed while it was being loaded (SHA-256 before "
                    f"{digest}, after {now}); restart the process once the file is complete"
                )
            _loaded[path] = _Loaded(digest, chosen.name, handle, check)
        digests.append(digest)
    return digests

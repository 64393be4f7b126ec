"""Native plugin libraries passed as ``plugins=``: checked, registered once, and fingerprinted.

Each library must export ``getCreators``: on Linux its ELF dynamic symbol table is read from the
file before anything is loaded, so no code of a library that is not a plugin runs. It is then
loaded through the backend's plugin registry, once per content (the same bytes at another path
are not loaded again), and kept loaded for the life of the process. The SHA-256 of its bytes at
load time is remembered; a library that changes while it loads, or after, is reported instead of
silently mixing old code with a new identity.

A deployed engine's libraries (``open_deployed(..., plugins=...)``) are verified by the C++
library first (``_core.DeployedEngine.verify_plugins``: each read into a sealed in-memory copy
and its SHA-256 checked against the entry's) and loaded from that copy
(``load_verified_plugins``), never from their paths.
"""

from __future__ import annotations

import atexit
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
    # The sealed copy a verified library was loaded from (_core.VerifiedPluginLibrary), or None.
    # Kept open while the library is loaded: the loader knows it by its "/proc/self/fd/N" name,
    # and a later copy given that descriptor number once it was closed would be taken for it.
    copy: _core.VerifiedPluginLibrary | None = None


_lock = threading.Lock()
_loaded: dict[Path, _Loaded] = {}
# The libraries loaded from verified copies, by SHA-256 and backend: they have no path of their
# own that a later call could name.
_verified: dict[tuple[str, str], _Loaded] = {}
# The sealed copies are released when the interpreter exits, before the extension is unloaded
# (which would report them as leaked objects); the libraries loaded from them stay mapped.
atexit.register(_verified.clear)


def _same_content(digest: str, chosen: Backend) -> _Loaded | None:
    """The library of SHA-256 ``digest`` loaded for ``chosen`` already, by path or verified."""
    loaded = (*_loaded.values(), *_verified.values())
    return next(
        (item for item in loaded if item.digest == digest and item.backend == chosen.name), None
    )


def plugin_paths(plugins: Iterable[Any]) -> list[Path]:
    """The paths ``plugins`` holds; ValueError for a single path or an entry that is none."""
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
    for given in plugin_paths(plugins):
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
            same = _same_content(digest, chosen)
            if same is not None:
                # The same library at another path: its creators are registered already.
                _loaded[path] = same
                digests.append(digest)
                continue
            check = _check_exports(path, data)
            handle = _register(str(path), f"'{path}'", chosen, logger)
            now = _digest(_read(path))
            if now != digest:
                raise PluginLibraryError(
                    f"plugin library '{path}' changed while it was being loaded (SHA-256 before "
                    f"{digest}, after {now}); restart the process once the file is complete"
                )
            _loaded[path] = _Loaded(digest, chosen.name, handle, check)
        digests.append(digest)
    return digests


def _register(loader_path: str, named: str, chosen: Backend, logger: Any) -> Any:
    """The registry's handle of the library it loaded from ``loader_path``; PluginLibraryError
    quoting the backend's logged errors, with the library ``named`` so, when it refuses it."""
    log.trt_logger(chosen)  # make sure the registry logs through tensoracle's logger
    with log.capture(logger) as errors:
        try:
            handle = chosen.module.get_plugin_registry().load_library(loader_path)
        except Exception as error:  # the registry's own refusal
            errors.append(str(error))
            handle = None
    if handle is None:
        raise PluginLibraryError(
            f"{chosen.name} rejected plugin library {named}: {log.describe(errors)}"
        )
    return handle


def load_verified_plugins(
    verified: Iterable[_core.VerifiedPluginLibrary], chosen: Backend, logger: Any = None
) -> None:
    """Registers (once per process) each plugin library ``verified`` holds
    (``_core.VerifiedPluginLibrary``, from ``DeployedEngine.verify_plugins``) from its sealed
    in-memory copy (``loader_path``), so that the registry loads the bytes whose SHA-256 was
    checked, whatever happens to the file afterwards. A library whose bytes are loaded already
    for this backend (by path or verified) is not loaded again: the registry would refuse its
    creators a second time. Raises PluginLibraryError naming the file for a copy that does not
    export ``getCreators`` or that the registry refuses."""
    for library in verified:
        digest = library.sha256
        with _lock:
            if _same_content(digest, chosen) is not None:
                continue
            path = Path(library.path)
            # Verified copies exist only on Linux, where the check reads the copy's bytes.
            check = _check_exports(path, _read(Path(library.loader_path)))
            named = f"'{path}' (SHA-256 {digest}, verified)"
            handle = _register(str(library.loader_path), named, chosen, logger)
            _verified[(digest, chosen.name)] = _Loaded(digest, chosen.name, handle, check, library)

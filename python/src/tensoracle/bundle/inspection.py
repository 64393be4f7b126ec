"""The checks behind :mod:`tensoracle.bundle`: a bundle's ``bundle.json`` and cubins, a plugin
library built from it, and a wheel holding one (read through :mod:`.wheel_archive`).

The checks run in the C++ core, in the order of the 1.x format (``tensoracle bundle inspect`` runs
the same code); each failure raises its own subclass of :class:`BundleError`, itself a
``ValueError``. Importing this module loads neither TensorRT, Triton, torch nor a GPU library.
"""

from __future__ import annotations

import codecs
import errno
import json
import os
import re
import stat
import sys
import tempfile
from collections.abc import Collection
from pathlib import Path, PurePosixPath
from typing import Any

from tensoracle import _core
from tensoracle.bundle.wheel_archive import WheelArchive
from tensoracle.errors import (
    BundleError,
)

#: The SMs a 1.x bundle is built for; ``cubin_sm`` accepts only these unless told otherwise.
SMS_1X = ("sm86", "sm89", "sm120")
_MAX_MANIFEST_BYTES = _core.MAX_MANIFEST_BYTES
_MAX_MANIFEST_VALUES = _core.MAX_MANIFEST_VALUES
# What the core reads of a cubin (bundle_manifest.hpp) and of a plugin library (bundle_inspect.cpp).
_MAX_CUBIN_BYTES = _core.MAX_CUBIN_BYTES
_MAX_PLUGIN_BYTES = 2 << 30
_TARGET = re.compile(r"sm([0-9]{2,3})")


def bundle_sha256(manifest: dict[str, Any]) -> str:
    """The bundle digest: hex SHA-256 of the canonical JSON of ``manifest`` (sorted keys,
    ``(",", ":")`` separators, ASCII escapes) without its ``bundle_sha256`` key.

    Raises:
        BundleError: ``manifest`` holds a float or an integer beyond 64 bits, whose canonical
            spelling the core does not reproduce.
    """
    return _core.bundle_sha256(json.dumps(manifest))


def cubin_sm(data: bytes, *, targets: Collection[str] | None = None) -> str:
    """The SM a cubin was built for, read from its ELF header: ``"sm86"``, ``"sm89"`` or
    ``"sm120"``, or another of ``targets`` when they are given.

    Args:
        data: The cubin's bytes.
        targets: The target names to accept (``"sm<SM>"``); ``None`` accepts the 1.x set. Our
            producer's extra targets are accepted with e.g. ``targets=("sm80", "sm90", "sm100")``
            (an arch-specific cubin, such as sm_90a, reads as its SM).

    Raises:
        CubinArchitectureError: Shorter than 64 bytes or not a 64-bit little-endian ELF,
            ``e_machine`` is not 190, ``EI_ABIVERSION`` is not 7 or 8, or the SM is not accepted.
        ValueError: A name in ``targets`` is not of the form ``"sm<SM>"``.
    """
    allowed = []
    for name in SMS_1X if targets is None else targets:
        match = _TARGET.fullmatch(name) if isinstance(name, str) else None
        if match is None:
            raise ValueError(f"target {name!r} is not a target name like 'sm86'")
        allowed.append(int(match.group(1)))
    return f"sm{_core.cubin_sm(data, allowed)}"


def _open_manifest(path: Path) -> int | None:
    """bundle.json opened for reading without following a link, or None for a link (on Windows,
    for anything but a regular file): the core judges those itself. A device or a FIFO neither
    blocks nor streams forever; the caller then reads only a regular file of bounded size."""
    if sys.platform == "win32":
        return _open_manifest_without_o_nofollow(path)
    try:
        return os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return None
        raise


def _open_manifest_without_o_nofollow(path: Path) -> int | None:
    """Windows, which has neither O_NOFOLLOW nor O_NONBLOCK: only a regular file is opened, as
    ``os.lstat`` sees it (a symbolic link or a junction is not one), and only when the file opened
    is the one it saw (not a link swapped in meanwhile); None otherwise."""
    seen = os.lstat(path)
    if not stat.S_ISREG(seen.st_mode):
        return None
    descriptor = os.open(
        path, os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOINHERIT", 0)
    )
    if not os.path.samestat(seen, os.fstat(descriptor)):
        os.close(descriptor)
        return None
    return descriptor


def _check_manifest_json(root: Path) -> None:
    """FileNotFoundError when bundle.json is absent, json.JSONDecodeError when it is not JSON,
    as 1.x raises them; BundleError, naming the file, the limit and the value, when it is larger
    or nests deeper than the core reads. The core's own bounded parser judges the text (in time
    linear in its size, whatever its shape); the core judges everything else."""
    path = root / "bundle.json"
    descriptor = _open_manifest(path)
    if descriptor is None:
        return
    # Judged before it becomes a file object, which a directory cannot be.
    info = os.fstat(descriptor)
    if not stat.S_ISREG(info.st_mode):
        os.close(descriptor)
        return
    if info.st_size > _MAX_MANIFEST_BYTES:
        os.close(descriptor)
        raise BundleError(
            f"bundle manifest '{path}' is {info.st_size} bytes, larger than the limit of "
            f"{_MAX_MANIFEST_BYTES} bytes"
        )
    with os.fdopen(descriptor, "rb") as file:
        data = file.read(_MAX_MANIFEST_BYTES + 1)
    if data.startswith(codecs.BOM_UTF8):
        # The core skips a byte order mark; 1.x's json.loads refused it, and so does this check.
        raise json.JSONDecodeError(
            "Unexpected UTF-8 BOM (decode using utf-8-sig)", data.decode("utf-8", "replace"), 0
        )
    refusal = _core.json_refusal(data, _MAX_MANIFEST_BYTES, max_values=_MAX_MANIFEST_VALUES)
    if refusal is None:
        return
    message, offset = refusal
    if offset is None:
        # Beyond a limit (size, depth) or a number beyond a double: refused as the core refuses
        # it when it reads the manifest itself.
        raise BundleError(f"bundle manifest '{path}' is not JSON: {message}")
    # JSONDecodeError counts characters of the decoded text, the core bytes.
    document = data.decode("utf-8", "replace")
    position = len(data[:offset].decode("utf-8", "replace"))
    raise json.JSONDecodeError(f"{path} is not JSON ({message})", document, position)


def inspect_bundle_report(
    root: str | os.PathLike[str], *, plugin: str | os.PathLike[str] | None = None
) -> dict[str, Any]:
    """Runs the checks of :func:`inspect_bundle` and returns the core's detailed report (the
    keys are listed in this module's docstring)."""
    directory = Path(root)
    _check_manifest_json(directory)
    library = None if plugin is None else os.fspath(plugin)
    report: dict[str, Any] = json.loads(_core.inspect_bundle(os.fspath(directory), library))
    return report


def inspect_bundle(root: Path, *, plugin: Path | None = None) -> str:
    """Checks a bundle directory and, with ``plugin``, the library built from it; returns the
    bundle digest (64 hex digits).

    Raises:
        FileNotFoundError: ``root/bundle.json`` does not exist.
        json.JSONDecodeError: bundle.json is not JSON.
        BundleError: A manifest, entry or path rule is broken.
        MissingCubinError: An entry's cubin file does not exist.
        CorruptCubinError: A cubin's length or SHA-256 differs from its entry.
        CubinArchitectureError: A cubin's ELF header names another SM than its ``target_sm``.
        PluginBundleMismatchError: The library is unreadable, lacks ``tensoracle_bundle_sha256``,
            carries another digest, or an embedded cubin is missing, of another size or differs.
    """
    digest: str = inspect_bundle_report(root, plugin=plugin)["bundle_sha256"]
    return digest


def _renamed(error: BundleError, replacements: dict[str, str]) -> BundleError:
    message = str(error)
    for old, new in replacements.items():
        message = message.replace(old, new)
    return type(error)(message)


def inspect_wheel(path: Path, *, plugin: str | None = None) -> str:
    """Runs :func:`inspect_bundle` on the one bundle inside a wheel (and ``plugin``, a path
    inside the wheel); nothing is installed. Returns the digest.

    Only ``bundle.json``, the cubins its entries name and ``plugin`` are taken out of the
    archive, into a temporary directory removed on every path, within the limits of
    :mod:`tensoracle.bundle.wheel_archive` (each member's size by its role, the sum, the compression
    ratio; declared sizes judged before inflating, inflated bytes counted while reading).

    Raises:
        zipfile.BadZipFile: ``path`` is not a zip archive, or a member cannot be read from it (a
            :class:`~tensoracle.bundle.wheel_archive.WheelArchiveError`, also a ``BundleError``).
        BundleError: A member name is not a safe relative path, is too long or too deep, is in
            the archive twice or is both a file and a folder ("wheel contains an invalid path"),
            the wheel holds no or several ``bundle.json``, ``plugin`` is not a safe relative path
            ("invalid plugin path in wheel"), or a member taken out is beyond a limit.
        PluginBundleMismatchError: ``plugin`` is not in the wheel, or does not match the bundle.
        And every error of :func:`inspect_bundle`.
    """
    wheel = Path(path)
    with (
        WheelArchive(wheel) as archive,
        tempfile.TemporaryDirectory(prefix="tensoracle-wheel-") as scratch,
    ):
        manifests = [parts for parts in archive.files if parts[-1] == "bundle.json"]
        if len(manifests) != 1:
            names = ["/".join(parts) for parts in manifests]
            raise BundleError(
                f"wheel {wheel} holds {len(manifests)} bundle.json files {names}, "
                "expected exactly one"
            )
        if plugin is not None and not _core.is_safe_relative_path(plugin):
            raise BundleError(f"invalid plugin path in wheel: {plugin!r} (in {wheel})")
        root = Path(scratch)
        prefix = manifests[0][:-1]
        bundle_dir = root.joinpath(*prefix)
        archive.copy(manifests[0], bundle_dir / "bundle.json", _MAX_MANIFEST_BYTES)
        for parts in _named_cubins(bundle_dir / "bundle.json", prefix, archive):
            archive.copy(parts, root.joinpath(*parts), _MAX_CUBIN_BYTES)
        library = None
        if plugin is not None:
            plugin_parts = PurePosixPath(plugin).parts
            library = root.joinpath(*plugin_parts)
            if plugin_parts in archive.files and not library.exists():
                archive.copy(plugin_parts, library, _MAX_PLUGIN_BYTES)
        try:
            return inspect_bundle(bundle_dir, plugin=library)
        except BundleError as error:
            # Name the wheel's members rather than the temporary directory.
            raise _renamed(error, {str(root): f"{wheel}!"}) from None


def _named_cubins(
    manifest: Path, prefix: tuple[str, ...], archive: WheelArchive
) -> list[tuple[str, ...]]:
    """The wheel's file members that the entries of ``manifest`` (taken out to ``manifest``)
    name, each once; nothing when the manifest is not JSON within the limits, which
    :func:`inspect_bundle` then reports itself, as it reports a name that is not safe or not in
    the wheel."""
    data = manifest.read_bytes()
    if data.startswith(codecs.BOM_UTF8) or _core.json_refusal(
        data, _MAX_MANIFEST_BYTES, max_values=_MAX_MANIFEST_VALUES
    ):
        return []
    document = json.loads(data)  # within the core's limits of size and depth
    entries = document.get("entries") if isinstance(document, dict) else None
    named: list[tuple[str, ...]] = []
    for entry in entries if isinstance(entries, list) else []:
        file = entry.get("file") if isinstance(entry, dict) else None
        if not isinstance(file, str) or not _core.is_safe_relative_path(file):
            continue
        parts = prefix + PurePosixPath(file).parts
        if parts in archive.files and parts not in named:
            named.append(parts)
    return named

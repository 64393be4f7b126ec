"""Inspection of cubin bundles and of the plugin libraries (or wheels) built from them.

The checks run in the C++ core (``tensoracle bundle inspect`` runs the same code): the manifest,
each cubin's SHA-256, the SM its ELF header names, its parameter count (public arguments plus the
two zero-sized scratch pointers), and, with a plugin, that the library embeds exactly this
bundle's cubins. Each failure raises its own subclass of :class:`tensoracle.errors.BundleError`.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from tensoracle import _core
from tensoracle.errors import BundleError, PluginBundleMismatchError


@dataclass(frozen=True)
class CubinReport:
    """One verified cubin: the SM it is filed under equals the SM of its ELF header."""

    kernel: str
    sm: int
    path: str
    sha256: str
    size: int
    params: int
    in_plugin: bool | None


@dataclass(frozen=True)
class BundleReport:
    """The result of a successful inspection."""

    directory: str
    bundle_sha256: str
    triton_version: str
    ptxas_version: str
    targets: tuple[int, ...]
    kernels: tuple[dict[str, Any], ...]
    cubins: tuple[CubinReport, ...]
    plugin: str | None

    @classmethod
    def from_json(cls, report: dict[str, Any]) -> BundleReport:
        return cls(
            directory=report["directory"],
            bundle_sha256=report["bundle_sha256"],
            triton_version=report["triton"],
            ptxas_version=report["ptxas"],
            targets=tuple(report["targets"]),
            kernels=tuple(report["kernels"]),
            cubins=tuple(
                CubinReport(
                    kernel=c["kernel"],
                    sm=c["sm"],
                    path=c["path"],
                    sha256=c["sha256"],
                    size=c["bytes"],
                    params=c["params"],
                    in_plugin=c.get("in_plugin"),
                )
                for c in report["cubins"]
            ),
            plugin=report["plugin"],
        )


def inspect_bundle(
    directory: str | os.PathLike[str], plugin: str | os.PathLike[str] | None = None
) -> BundleReport:
    """Checks a bundle directory and, with ``plugin``, the library built from it.

    Raises:
        MissingCubinError: A listed cubin, or one a bundle target needs, is absent.
        CorruptCubinError: A cubin is not a CUDA ELF image, lacks its kernel, or its SHA-256
            differs from bundle.json.
        FalseSmClaimError: A cubin's ELF header names another SM than it is filed under.
        BundleAbiError: A kernel's parameters or scratch needs are not the supported ABI.
        PluginBundleMismatchError: The library does not embed exactly this bundle.
        BundleError: bundle.json is missing or malformed.
    """
    report = _core.inspect_bundle(
        os.fspath(directory), None if plugin is None else os.fspath(plugin)
    )
    return BundleReport.from_json(json.loads(report))


def _safe_member(name: str) -> PurePosixPath:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts:
        raise BundleError(f"wheel member {name!r} escapes the wheel")
    return path


def inspect_wheel(
    path: str | os.PathLike[str], plugin: str, bundle: str | None = None
) -> BundleReport:
    """Runs :func:`inspect_bundle` on a bundle and plugin library inside a wheel, unpacked to a
    temporary directory; nothing is installed.

    Args:
        path: The wheel file.
        plugin: The library's path inside the wheel, e.g. ``"my_model/libplugin.so"``.
        bundle: The bundle directory inside the wheel; found automatically when the wheel holds
            exactly one ``bundle.json``.

    Raises:
        BundleError: The wheel holds no bundle, or several and ``bundle`` is not given.
        PluginBundleMismatchError: ``plugin`` is not in the wheel, or does not embed the bundle.
        And every error of :func:`inspect_bundle`.
    """
    wheel = Path(path)
    with zipfile.ZipFile(wheel) as archive:
        names = [info.filename for info in archive.infolist() if not info.is_dir()]
        if bundle is None:
            manifests = [n for n in names if PurePosixPath(n).name == "bundle.json"]
            if len(manifests) != 1:
                raise BundleError(
                    f"wheel {wheel} holds {len(manifests)} bundle.json files {manifests}; "
                    "pass bundle='<directory inside the wheel>'"
                )
            prefix = PurePosixPath(manifests[0]).parent
        else:
            prefix = _safe_member(bundle)
        if plugin not in names:
            raise PluginBundleMismatchError(f"wheel {wheel} has no member {plugin!r}")
        with tempfile.TemporaryDirectory(prefix="tensoracle-wheel-") as scratch:
            root = Path(scratch)
            bundle_dir = root / "bundle"
            bundle_dir.mkdir()
            for name in names:
                member = _safe_member(name)
                if prefix.parts == member.parts[: len(prefix.parts)]:
                    target = bundle_dir.joinpath(*member.parts[len(prefix.parts) :])
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(archive.read(name))
            library = root / "plugin" / PurePosixPath(_safe_member(plugin)).name
            library.parent.mkdir()
            library.write_bytes(archive.read(plugin))
            try:
                report = json.loads(_core.inspect_bundle(str(bundle_dir), str(library)))
            except BundleError as error:
                # Name the wheel's members rather than the temporary directory.
                message = str(error).replace(str(bundle_dir), f"{wheel}!/{prefix}")
                message = message.replace(str(library), f"{wheel}!/{plugin}")
                raise type(error)(message) from None
    report["directory"] = f"{wheel}!/{prefix}"
    report["plugin"] = f"{wheel}!/{plugin}"
    return BundleReport.from_json(report)

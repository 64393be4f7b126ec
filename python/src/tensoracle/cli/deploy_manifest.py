"""The deployment manifest ``tensoracle build --manifest FILE`` writes: for every recipe, the entry
it prepared, described from the saved file itself, so that an application (C++ or Python) can
find, select and check a prebuilt engine without the model package's graph code.

Schema version 1 (docs/deploy.md): one JSON object, ``schema_version``, the recipe spec, the
remote cache (``null`` without ``--push``) and ``entries``, one per prepared recipe, each with the
recipe's name and graph_version, the entry's file name, its identity conditions as the header
records them (backend and version, targets or hardware compatibility level, inputs and their
profiles), the IO signature the header records, the plan's size and XXH3-128, the file's size,
and the fleet object when pushed: its key, URL, whether it is signed and its Ed25519 signature,
read back from the object's last bytes (one ranged read), so that an application holding the
verify key can check its local copy of the entry without the remote cache. That signature is the
entry's only when the object is the saved file's own build: its preamble and header (which the
signature signs, and which record the plan's checksums) are read back too and compared with the
file's, and an object that is another build under the same key (published before a
``--force-rebuild``, or by another node while this one reused its own) is refused
(``OtherBuildPublished``) rather than recorded beside bytes it does not sign. The file is
replaced atomically: a reader sees the old manifest or the new one, never a part.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tensoracle import _core
from tensoracle.cache.remote.objects import RemoteObjects, RemoteUnavailable
from tensoracle.errors import CorruptEngineError

SCHEMA_VERSION = 1
# The Ed25519 signature that opens a signature trailer (remote/object.hpp).
SIGNATURE_BYTES = _core.SIGNATURE_TRAILER_BYTES - _core.SIGNATURE_MAGIC_BYTES


@dataclass(frozen=True)
class Signing:
    """How ``write`` signs the manifest: the Ed25519 signing key files, the release's version
    (raised with every release) and its expiry (UTC, ``2027-03-01T00:00:00Z``)."""

    keys: tuple[Path, ...]
    version: int
    expires: str

    @staticmethod
    def of(keys: list[Path], version: int | None, expires_in_days: float) -> Signing:
        """Signing with ``keys``; ``version`` None: the current time in seconds since 1970 (it
        rises with every release); the expiry ``expires_in_days`` from now."""
        now = time.time()
        expires = _core.format_utc_time(int((now + expires_in_days * 86400) * 1e9))
        return Signing(tuple(keys), int(now) if version is None else version, expires)


class OtherBuildPublished(RuntimeError):
    """The remote cache holds another build of an entry than the saved file: the manifest would
    pair the file's plan with a signature over other bytes."""


def saved_prefix(path: Path) -> tuple[bytes, int]:
    """The first bytes of the saved engine file at ``path`` (its preamble and its header) and the
    file's size. The file is opened as the core opens a cache folder's files: a symbolic link is
    not followed and anything but a regular file (a FIFO, a device) is refused at once, never
    waited on, with ``CorruptEngineError`` naming it."""
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    if not hasattr(os, "O_NOFOLLOW") and stat.S_ISLNK(os.lstat(path).st_mode):
        raise CorruptEngineError(_link_refusal(path))
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise CorruptEngineError(_link_refusal(path)) from error
        raise
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise CorruptEngineError(
                _core.not_regular_refusal(str(path), stat.S_ISDIR(info.st_mode))
            )
    except BaseException:
        os.close(descriptor)
        raise
    with os.fdopen(descriptor, "rb") as file:
        prefix = file.read(_core.ENGINE_PREAMBLE_BYTES)
        return prefix + file.read(_core.engine_prefix_bytes(prefix) - len(prefix)), info.st_size


def _link_refusal(path: Path) -> str:
    return _core.link_refusal(str(path))


def saved_header(path: Path) -> bytes:
    """The first bytes of a saved engine file: its preamble and its header (``saved_prefix``)."""
    return saved_prefix(path)[0]


def published_signature(objects: RemoteObjects, key: str) -> bytes | None:
    """The Ed25519 signature of the published object at ``key``, from its signature trailer (its
    last bytes, one ranged read), or None when it is unsigned. ``RemoteUnavailable`` when the
    store fails or the object is gone."""
    tail = objects.get_tail(key, _core.SIGNATURE_TRAILER_BYTES)
    if tail is None:
        raise RemoteUnavailable(f"{objects.url(key)} does not exist: its signature cannot be read")
    size, data = tail
    if len(data) != _core.SIGNATURE_TRAILER_BYTES or not _core.has_signature_trailer(size, data):
        return None
    return data[:SIGNATURE_BYTES]


def published_prefix(objects: RemoteObjects, key: str) -> bytes:
    """The first bytes of the published object at ``key``, its preamble and its header, in two
    ranged reads (the preamble, then as much more as it says the header holds).
    ``RemoteUnavailable`` when the store fails or the object is gone."""
    preamble = objects.get_range(key, 0, _core.ENGINE_PREAMBLE_BYTES)
    if preamble is None:
        raise RemoteUnavailable(f"{objects.url(key)} does not exist: its header cannot be read")
    prefix = bytes(preamble)
    end = _core.engine_prefix_bytes(prefix)  # bounded by the readers' header limit
    if end > len(prefix):
        header = objects.get_range(key, len(prefix), end)
        if header is None:
            raise RemoteUnavailable(f"{objects.url(key)} was removed while its header was read")
        prefix += bytes(header)
    return prefix


def fleet_object(objects: RemoteObjects, key: str, recipe: str, path: Path) -> dict[str, Any]:
    """The manifest's description of the published object at ``key`` for ``recipe``'s entry
    saved at ``path``: key, URL, whether it is signed, and the signature as lowercase hex (None
    when unsigned), read from the object. ``OtherBuildPublished`` naming the recipe, the file,
    the object and the SHA-256 of each one's preamble and header when the object is another build
    than the file (they differ): its signature is not over the entry's bytes."""
    local, _size = saved_prefix(path)
    published = published_prefix(objects, key)
    if published != local:
        raise OtherBuildPublished(
            f"recipe {recipe!r}: {objects.url(key)} holds another build of {path.name} than "
            f"'{path}' (SHA-256 of preamble and header: "
            f"{hashlib.sha256(published).hexdigest()} published, "
            f"{hashlib.sha256(local).hexdigest()} here), so its signature is not over this "
            "entry's bytes and no manifest is written. A published engine is never replaced: to "
            f"deploy the published build, remove '{path}' and build again without "
            "--force-rebuild (it is downloaded); to deploy this one, remove the object with "
            "S3 tools and build with --push again"
        )
    signature = published_signature(objects, key)
    return {
        "key": key,
        "url": objects.url(key),
        "signed": signature is not None,
        "signature": None if signature is None else signature.hex(),
    }


def file_sha256(path: Path) -> str:
    """The SHA-256 of every byte of the file at ``path`` (read in 1 MiB pieces)."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while piece := file.read(1 << 20):
            digest.update(piece)
    return digest.hexdigest()


def entry(
    recipe: str, graph_version: str, path: Path, fleet: dict[str, Any] | None
) -> dict[str, Any]:
    """One prepared entry as the manifest describes it, read from the saved file ``path``
    (``CorruptEngineError`` when its header cannot be read). ``fleet``: its published object as
    ``fleet_object`` describes it, or None when it was not published. The entry records the
    SHA-256 of the whole file (what ``sha256sum`` prints, and a signed manifest's subject) and of
    its preamble and header (which bind every plan chunk's digest): an application checks the
    header against it before it reads any chunk."""
    header, size = saved_prefix(path)
    _core.decode_engine_header(header, size, str(path))  # checked within the readers' limits
    decoded = json.loads(header[_core.ENGINE_PREAMBLE_BYTES :])
    conditions, references, plan = (decoded[key] for key in ("conditions", "references", "plan"))
    return {
        "recipe": recipe,
        "graph_version": graph_version,
        "file_name": path.name,
        "conditions": conditions,
        "backend": conditions.get("backend"),
        "backend_version": conditions.get("backend_version"),
        "targets": conditions.get("targets"),
        "hardware_compatibility": conditions.get("hardware_compatibility"),
        "io": references.get("io") if isinstance(references, dict) else None,
        "plan": {"size": plan["size"], "xxh3_128": plan["xxh3_128"]},
        "engine_bytes": size,
        "sha256": file_sha256(path),
        "header_sha256": hashlib.sha256(header).hexdigest(),
        "fleet": fleet,
    }


def check_writable(path: Path) -> None:
    """Refuses, before anything is built, a manifest path that ``write`` could not replace:
    ``OSError`` naming it when it is no file name (``--manifest ""``), a name longer than the
    file system allows, a directory or another non-regular file, or in a folder that does not
    exist or cannot be written."""
    folder = path.parent if str(path.parent) else Path(".")
    problem = None
    if path.name in ("", ".", ".."):
        problem = "it is not a file name"
    elif folder.is_dir() and len(os.fsencode(path.name)) > os.pathconf(folder, "PC_NAME_MAX"):
        problem = f"its name is longer than the {os.pathconf(folder, 'PC_NAME_MAX')} bytes allowed"
    elif path.is_dir():
        problem = "it is a directory"
    elif path.exists() and not path.is_file():
        problem = "it is not a regular file (a FIFO, socket or device)"
    elif not folder.is_dir():
        problem = f"its folder {folder} does not exist"
    elif not os.access(folder, os.W_OK | os.X_OK):
        problem = f"its folder {folder} is not writable"
    if problem is not None:
        raise OSError(f"cannot write the manifest {path}: {problem}")


def write(
    path: Path,
    spec: str,
    remote: str | None,
    entries: list[dict[str, Any]],
    shard: dict[str, Any] | None = None,
    signing: Signing | None = None,
) -> None:
    """Writes the manifest to ``path`` atomically (a temporary file in its folder, flushed, then
    renamed over it); ``OSError`` naming the file when it cannot be written. A part of a sharded
    build also records ``shard`` (cli.build_shard.record), which readers of the entries ignore.
    With ``signing`` the file written is the signed manifest (``tensoracle manifest sign``'s
    DSSE envelope), signed by its keys with its version and expiry; ``ValueError`` naming the
    field when it cannot be signed."""
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "spec": spec,
        "remote": remote,
        "entries": entries,
    }
    if shard is not None:
        document["shard"] = shard
    text = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if signing is not None:
        text = _core.sign_manifest(
            text, str(path), signing.version, signing.expires, [str(key) for key in signing.keys]
        )
    folder = path.parent if str(path.parent) else Path(".")
    try:
        # A short name of its own: the manifest's name may be as long as the system allows.
        handle, temporary = tempfile.mkstemp(prefix=".manifest-", suffix=".tmp", dir=folder)
    except OSError as error:
        raise OSError(f"cannot write the manifest {path}: {error}") from error
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, 0o644)  # mkstemp's 0600 would keep the application from reading it
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise OSError(f"cannot write the manifest {path}: {error}") from error

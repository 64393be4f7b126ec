"""What ``tensoracle cache pull --manifest FILE`` checks: each entry of the deployment manifest
(docs/deploy.md) is the one the build recorded, whether it comes from the remote cache or is
already saved locally.

The manifest is read once, by the C++ library (``_core.read_trusted_manifest``, the reader
an application uses), so Python and C++ accept and refuse the same files and compute the same
identities, each refusal naming the file, the field and the value. A download is judged as it
arrives (``ManifestReceiver`` wraps the store's streamed receiver): its size against
``engine_bytes`` (plus the signature trailer) before any of its body is read, its header against
the entry's conditions, ``plan.size`` and ``plan.xxh3_128`` before the plan arrives, and, where the
manifest records the object's signature, its trailer against that signature before the object is
saved. A saved entry is read from its header and judged the same way. Every refusal names the
object or file and the manifest's field (``deploy.json: entries[0].plan.xxh3_128``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tensoracle import _core
from tensoracle.cli import deploy_manifest
from tensoracle.errors import CorruptEngineError, EngineConditionError, UntrustedEngineError


@dataclass(frozen=True)
class Expected:
    """One entry of the manifest, as a pull checks it."""

    where: str  # "deploy.json: entries[0]", for messages
    file_name: str
    identity: Any  # _core.EngineIdentity of the entry's conditions
    plan_size: int
    plan_xxh3_128: str
    engine_bytes: int
    signature: bytes | None  # the published object's signature, when the manifest records one
    header_sha256: str | None  # of the file's preamble and header, when the manifest records it
    bound: bool  # a verified signed manifest names the file: its digests are the publisher's


@dataclass(frozen=True)
class Manifest:
    path: Path
    remote: str | None
    entries: list[Expected]


@dataclass(frozen=True)
class Trust:
    """How the manifest is trusted (open_deployed's arguments): a verify key (its file or its
    PEM text) or a trust policy file, the lowest version accepted, and the cache folder whose
    record of accepted versions is checked and raised."""

    cache_dir: Path
    verify_key: Path | None = None
    verify_key_pem: str | None = None
    trust_policy: Path | None = None
    minimum_version: int = 0


def read(path: Path, trust: Trust | None = None) -> Manifest:
    """The manifest at ``path``, read once by the C++ library (every field checked, the entries'
    identities those of their conditions as recorded), trusted as ``trust`` says (a signed
    manifest verified by its keys, not expired, not older than the cache folder accepted before;
    without keys a signed manifest is refused): ``ValueError`` naming the file, field and value
    when it is not a valid deployment manifest, ``UntrustedEngineError`` naming what failed when
    the keys do not accept it, ``OSError`` when it cannot be read."""
    if trust is None:
        document = _core.read_trusted_manifest(path).document
    else:
        document = _core.read_trusted_manifest(
            path,
            str(trust.cache_dir),
            None if trust.verify_key is None else str(trust.verify_key),
            trust.verify_key_pem,
            None if trust.trust_policy is None else str(trust.trust_policy),
            trust.minimum_version,
        ).document
    expected = []
    for index, checked in enumerate(document["entries"]):
        signature = checked["fleet_signature"]
        expected.append(
            Expected(
                f"{path}: entries[{index}]",
                checked["file_name"],
                _core.recorded_identity(checked["conditions_json"]),
                checked["plan_size"],
                checked["plan_xxh3_128"],
                checked["engine_bytes"],
                None if signature is None else bytes.fromhex(signature),
                checked["header_sha256"],
                bool(checked["bound"]),
            )
        )
    return Manifest(path, document["remote"], expected)


def _check_header_digest(expected: Expected, what: str, prefix: bytes) -> None:
    """Raises ``UntrustedEngineError`` (a signed manifest's file) or ``EngineConditionError`` when
    the SHA-256 of the preamble and header ``prefix`` of ``what`` is not the manifest's
    ``header_sha256`` (which binds the digest of every plan chunk)."""
    if expected.header_sha256 is None:
        return
    digest = hashlib.sha256(prefix).hexdigest()
    if digest != expected.header_sha256:
        message = (
            f"{what} is not the entry {expected.where} records: the SHA-256 of its preamble and "
            f"header is {digest}, {expected.where}.header_sha256 is {expected.header_sha256}"
        )
        raise (UntrustedEngineError if expected.bound else EngineConditionError)(message)


def _difference(
    expected: Expected, what: str, conditions_json: str, header: bytes, size: int
) -> None:
    """Raises ``EngineConditionError`` naming the first field in which ``what`` (an object or a
    file, with the canonical ``conditions_json`` and the header ``header``, the bytes after the
    preamble, of an engine file of ``size`` bytes) differs from ``expected``."""
    wanted = json.loads(expected.identity.conditions_json)
    found = json.loads(conditions_json)
    if found != wanted:
        keys = sorted(
            key for key in wanted.keys() | found.keys() if wanted.get(key) != found.get(key)
        )
        raise EngineConditionError(
            f"{what} is not the entry {expected.where} records: its conditions differ in "
            f"{', '.join(keys)} ({expected.where}.conditions)"
        )
    plan = json.loads(header)["plan"]
    for field, recorded, held in (
        ("plan.size", expected.plan_size, plan.get("size")),
        ("plan.xxh3_128", expected.plan_xxh3_128, plan.get("xxh3_128")),
        ("engine_bytes", expected.engine_bytes, size),
    ):
        if recorded != held:
            raise EngineConditionError(
                f"{what} is not the entry {expected.where} records: {expected.where}.{field} is "
                f"{recorded!r}, {'it holds' if field == 'engine_bytes' else 'its header records'} "
                f"{held!r}"
            )


def check_saved(path: Path, expected: Expected) -> None:
    """Judges the saved entry at ``path`` from its header: ``EngineConditionError`` naming the
    field that differs from ``expected``, ``CorruptEngineError``/``OSError`` when it cannot be
    read (a link or anything but a regular file is refused, never followed or waited on). The
    file is only read."""
    header, size = deploy_manifest.saved_prefix(path)
    conditions_json, _references, _offset = _core.decode_engine_header(header, size, str(path))
    _difference(
        expected,
        f"the saved entry {path}",
        conditions_json,
        header[_core.ENGINE_PREAMBLE_BYTES :],
        size,
    )
    _check_header_digest(expected, f"the saved entry {path}", header)


class ManifestReceiver:
    """The store's receiver (``_core.RemoteReceiver``) with the manifest's checks of the object
    at ``url``: its size before the body, its header before the plan, its signature trailer
    before it is saved. A refusal raises ``EngineConditionError`` (or ``CorruptEngineError``)
    and the download aborts the receiver, leaving no file."""

    def __init__(self, receiver: Any, expected: Expected, url: str) -> None:
        self._receiver = receiver
        self._expected = expected
        self._url = url
        self._prefix = bytearray()
        self._needed = _core.ENGINE_PREAMBLE_BYTES
        self._header_checked = False
        self._tail = b""  # the last SIGNATURE_TRAILER_BYTES bytes received
        size = receiver.object_size
        trailer = _core.SIGNATURE_TRAILER_BYTES
        signed = expected.engine_bytes + trailer
        if size == expected.engine_bytes and expected.signature is not None:
            receiver.abort()
            raise EngineConditionError(
                f"the remote engine {url} is not the object {expected.where} records: it is "
                f"unsigned, and {expected.where}.fleet.signature records a signature"
            )
        if size not in (expected.engine_bytes, signed):
            receiver.abort()
            raise EngineConditionError(
                f"the remote engine {url} is not the entry {expected.where} records: "
                f"{expected.where}.engine_bytes is {expected.engine_bytes}, and the object holds "
                f"{size} bytes (neither that nor that with a {trailer}-byte signature trailer)"
            )

    @property
    def object_size(self) -> int:
        return int(self._receiver.object_size)

    def feed(self, chunk: Any) -> None:
        data = memoryview(chunk).cast("B")  # fed one at a time, in order (get_into)
        if not self._header_checked:
            self._collect(data)
        trailer = _core.SIGNATURE_TRAILER_BYTES
        self._tail = (self._tail + bytes(data[-trailer:]))[-trailer:]
        self._receiver.feed(chunk)

    def _collect(self, data: memoryview) -> None:
        used = 0
        while not self._header_checked and used < len(data):
            take = min(self._needed - len(self._prefix), len(data) - used)
            self._prefix += data[used : used + take]
            used += take
            if len(self._prefix) < self._needed:
                return
            if self._needed == _core.ENGINE_PREAMBLE_BYTES:
                self._needed = _core.engine_prefix_bytes(bytes(self._prefix))
                if self._needed > len(self._prefix):
                    continue
            prefix = bytes(self._prefix)
            # Bounded as every header is, and announcing the entry's engine size.
            conditions_json, _references, _offset = _core.decode_engine_header(
                prefix, self._expected.engine_bytes, self._url
            )
            _difference(
                self._expected,
                f"the remote engine {self._url}",
                conditions_json,
                prefix[_core.ENGINE_PREAMBLE_BYTES :],
                self._expected.engine_bytes,
            )
            # Then the whole header, which binds every chunk's digest (what the fields above do
            # not show).
            _check_header_digest(self._expected, f"the remote engine {self._url}", prefix)
            self._header_checked = True
            self._prefix = bytearray()

    def abort(self) -> None:
        self._receiver.abort()

    def finish(self) -> tuple[Any, Any]:
        expected = self._expected
        if expected.signature is not None:
            trailer = self._tail
            if trailer[: deploy_manifest.SIGNATURE_BYTES] != expected.signature:
                self._receiver.abort()
                raise EngineConditionError(
                    f"the remote engine {self._url} is not the object {expected.where} records: "
                    f"its signature is not {expected.where}.fleet.signature (published again "
                    "since the manifest was written, or signed by another key)"
                )
        if not self._header_checked:
            self._receiver.abort()
            raise CorruptEngineError(f"the remote engine {self._url} ended before its header")
        return self._receiver.finish()  # type: ignore[no-any-return]

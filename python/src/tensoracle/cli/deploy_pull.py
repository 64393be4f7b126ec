"""What ``tensoracle cache pull --manifest FILE`` checks: each entry of the deployment manifest
(docs/deploy.md) is the one the build recorded, whether it comes from the remote cache or is
already saved locally.

The manifest is read once, by the C++ library (``_core.read_trusted_manifest``, the reader
an application uses), and each entry is judged by the C++ library's checks
(``_core.ManifestEntryCheck``), the ones the native pull makes, so that Python and C++ accept and
refuse the same files with the same messages, each naming the object or file and the manifest's
field (``deploy.json: entries[0].plan.xxh3_128``). A download is judged as it arrives
(``ManifestReceiver`` wraps the store's streamed receiver): its size against ``engine_bytes``
(plus the signature trailer) before any of its body is read, its header against the entry's
conditions, ``plan.size``, ``plan.xxh3_128`` and ``header_sha256`` before the plan arrives, and,
where the manifest records the object's signature, its trailer against that signature before the
object is saved. A saved entry is read from its header and judged the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tensoracle import _core


@dataclass(frozen=True)
class Expected:
    """One entry of the manifest, as a pull checks it."""

    where: str  # "deploy.json: entries[0]", for messages
    file_name: str
    identity: Any  # _core.EngineIdentity of the entry's conditions
    check: Any  # _core.ManifestEntryCheck: the C++ checks of the entry's object and saved file


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
        trusted = _core.read_trusted_manifest(path)
    else:
        trusted = _core.read_trusted_manifest(
            path,
            str(trust.cache_dir),
            None if trust.verify_key is None else str(trust.verify_key),
            trust.verify_key_pem,
            None if trust.trust_policy is None else str(trust.trust_policy),
            trust.minimum_version,
        )
    document = trusted.document
    expected = []
    for index, checked in enumerate(document["entries"]):
        where = f"{path}: entries[{index}]"
        expected.append(
            Expected(
                where,
                checked["file_name"],
                _core.recorded_identity(checked["conditions"]),
                _core.ManifestEntryCheck(trusted, index, where),
            )
        )
    return Manifest(path, document["remote"], expected)


def check_saved(path: Path, expected: Expected) -> None:
    """Judges the saved entry at ``path`` from its header: ``EngineConditionError`` naming the
    field that differs from ``expected``, ``CorruptEngineError``/``OSError`` when it cannot be
    read (a link or anything but a regular file is refused, never followed or waited on). The
    file is only read."""
    expected.check.check_saved(path)


class ManifestReceiver:
    """The store's receiver (``_core.RemoteReceiver``) with the manifest's checks of the object
    at ``url`` (``_core.ManifestObjectCheck``): its size before the body, its header before the
    plan, its signature trailer before it is saved. A refusal raises ``EngineConditionError``
    (or ``CorruptEngineError``) and the download aborts the receiver, leaving no file."""

    def __init__(self, receiver: Any, expected: Expected, url: str) -> None:
        self._receiver = receiver
        try:
            self._check = _core.ManifestObjectCheck(expected.check, url, receiver.object_size)
        except BaseException:
            receiver.abort()
            raise

    @property
    def object_size(self) -> int:
        return int(self._receiver.object_size)

    def feed(self, chunk: Any) -> None:
        self._check.feed(chunk)  # fed one at a time, in order (get_into)
        self._receiver.feed(chunk)

    def abort(self) -> None:
        self._receiver.abort()

    def finish(self) -> tuple[Any, Any]:
        try:
            self._check.finish()
        except BaseException:
            self._receiver.abort()
            raise
        return self._receiver.finish()  # type: ignore[no-any-return]

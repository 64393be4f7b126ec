"""The remote tier of the open protocol (``tensoracle.cache.protocol`` enters it on a local miss).

Under the identity's local exclusive lock, after the local store missed:

1. GET ``engines/<entry>``, streamed into the local store as it arrives (``receive``, through
   ``_core.RemoteReceiver``): its size is judged against ``max_engine_bytes`` from the response
   and its preamble from the first 20 bytes; without a verify key also its header (bounded),
   which must announce exactly the object's size and the conditions asked for, before the plan
   arrives. Every byte is written to the store's temporary file for the entry and hashed as it
   comes (the plan's XXH3-128, and SHA-256 for the signature when a verify key is configured).
   At the end it is verified whole: the signature first when a verify key is configured (no
   header byte of an unsigned object is decoded), then exactly as a local file is verified
   (format, header, plan checksum, conditions); then the temporary file is renamed over the
   entry as the store's atomic save does (fsync, rename, fsync of the directory), and the entry
   is read again from the cache folder into this process's memory and verified as a local entry
   is (Store.read), and that copy is returned: the graph is not called. A refused object
   (damaged, truncated, other conditions, unsigned, wrongly signed) is reported with its key in one
   RemoteCacheWarning; its temporary file is removed, nothing is saved locally and the object is
   never overwritten; the node builds.
2. Missing: take the entry's build lease (lease.py) and build, or wait for the holder's object,
   polling with backoff, taking over an expired lease, for at most ``wait_seconds``.
3. After the local save, publish with one create-only PUT (signed when a signing key is
   configured) and release the lease.

Any failure of the store itself gives one RemoteCacheWarning for the open, and the node goes on
alone: it builds locally and publishes nothing. Every request is bounded by the configured
timeouts and retries, so an unreachable or slow store delays an open by a bounded time.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from tensoracle import _core
from tensoracle.cache.remote import lease as leases
from tensoracle.cache.remote.config import SIGNING_KEY, VERIFY_KEY, RemoteConfig, configure
from tensoracle.cache.remote.objects import RemoteObjects, RemoteUnavailable, TooLarge, engine_key
from tensoracle.cache.remote.publication import Publication, PublishOutcome
from tensoracle.errors import EngineCacheError, RemoteCacheWarning

_FIRST_POLL = 0.1
_LONGEST_POLL = 2.0


@dataclass(frozen=True)
class Fetched:
    """An engine taken from the remote cache and saved locally."""

    path: Path
    owner: Any  # the SavedEngine: the verified copy of the saved file, in this process's memory
    references: dict[str, Any]

    @property
    def plan(self) -> memoryview:
        """The verified copy of the saved file's plan (EngineKeyError for an encrypted entry:
        its plan is opened with a key, ``SavedEngine.opened_plan``)."""
        return memoryview(self.owner.plan)


def load_keys(config: RemoteConfig) -> tuple[Any, Any]:
    """(signing key or None, verify key or None); ValueError/OSError naming a bad key file."""
    signing = verify = None
    try:
        if config.signing_key is not None:
            signing = _core.SigningKey.from_pem_file(str(config.signing_key))
        if config.verify_key is not None:
            verify = _core.VerifyKey.from_pem_file(str(config.verify_key))
        elif config.verify_key_pem is not None:
            verify = _core.VerifyKey.from_pem(config.verify_key_pem)
    except ValueError as error:
        raise ValueError(f"{error} (set by {SIGNING_KEY} or {VERIFY_KEY})") from error
    return signing, verify


def receive(
    objects: RemoteObjects,
    key: str,
    file_name: str,
    identity: Any,
    verify: Any,
    store: Any,
    judge: Callable[[Any], Any] | None = None,
) -> tuple[Any, Any] | None:
    """The object at ``key`` streamed into ``store`` as its entry ``file_name`` and saved once
    verified: (``_core.RemoteEngine``, ``_core.SavedEngine``), or None when there is no object.
    ``identity`` gives the conditions asked for (None for a pull by name: the header's conditions
    must then be the identity ``file_name``). The caller holds the entry's exclusive lock
    (``store.lock(identity, True)``, or ``store.lock_entry(file_name, True)`` when the identity
    is not known before the header arrives). A refused object raises ``EngineCacheError`` or
    ``TooLarge`` (from its size, preamble or header as they arrive, or from the checks at the
    end), a failed transfer ``RemoteUnavailable``; either way nothing is saved and the store's
    entry is left as it was. ``judge`` (``cache pull --manifest``) wraps the receiver for more
    checks: it gets the ``_core.RemoteReceiver`` and returns what is fed instead (feed, abort,
    finish), aborting the receiver itself when it refuses the object from its size."""
    url = objects.url(key)

    def start(size: int) -> Any:
        receiver = _core.RemoteReceiver(store, url, file_name, size, identity, verify)
        return receiver if judge is None else judge(receiver)

    receiver = objects.get_into(key, start, objects.config.max_engine_bytes)
    if receiver is None:
        return None
    verified, saved = receiver.finish()
    return verified, saved


def publish_bytes(objects: RemoteObjects, file_name: str, data: bytes, signing: Any) -> Publication:
    """Publishes an engine file's bytes create-only (with its signature trailer when a signing
    key is given): PUBLISHED, or ALREADY_PRESENT when the entry was already published (the
    object is left as it was). A failure of the store raises ``RemoteUnavailable``."""
    if signing is not None:
        data = data + _core.signature_trailer(signing, file_name, data)
    key = engine_key(file_name)
    created = objects.create(key, data)
    outcome = PublishOutcome.PUBLISHED if created else PublishOutcome.ALREADY_PRESENT
    return Publication(outcome, objects.url(key))


class FleetSession:
    """One open's use of the remote cache; a context manager that releases the lease."""

    def __init__(self, remote: str | None, store: Any, identity: Any) -> None:
        self._config = configure(remote)
        self._store = store
        self._identity = identity
        self._objects: RemoteObjects | None = None
        self._signing: Any = None
        self._verify: Any = None
        self._lease: leases.Lease | None = None
        self._renewal: leases.Renewal | None = None
        self._usable = self._config is not None
        self._refused = False
        if self._config is not None:
            self._signing, self._verify = load_keys(self._config)

    def __enter__(self) -> FleetSession:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            if self._renewal is not None:
                self._renewal.stop()
        finally:
            self._give_back_lease()

    def _give_back_lease(self) -> None:
        """Releases the lease this open took, whatever happened since (a store that failed after
        the lease was taken included: left behind, it would make every other node wait a lease
        time). A failure of the release itself is suppressed: it gives the open's one
        RemoteCacheWarning unless the open warned already, and the lease then expires."""
        lease, self._lease = self._lease, None
        if lease is None:
            return
        try:
            lease.release()
        except RemoteUnavailable as error:
            self._unavailable(error)

    @property
    def can_publish(self) -> bool:
        """Signed fleets publish only from nodes holding the signing key; a node that has only
        the verify key reads and never publishes (an unsigned object would block the entry)."""
        return self._signing is not None or self._verify is None

    def _warn(self, message: str) -> None:
        warnings.warn(RemoteCacheWarning(message), stacklevel=4)

    def _unavailable(self, error: Exception) -> None:
        if self._usable:
            self._usable = False
            self._warn(f"remote engine cache unavailable, building locally: {error}")

    def fetch(self) -> Fetched | None:
        """The remote engine saved locally, or None when this node must build."""
        if not self._usable or self._config is None:
            return None
        try:
            self._objects = RemoteObjects(self._config)
            fetched = self._fetch_or_lease(self._objects, self._config)
            if fetched is None and self._lease is not None:  # this node builds: keep the lease
                self._renewal = leases.Renewal(self._lease, self._config.lease_seconds)
            return fetched
        except RemoteUnavailable as error:
            self._unavailable(error)
            self._give_back_lease()  # this node builds alone and publishes nothing
            return None

    def _fetch_or_lease(self, objects: RemoteObjects, config: RemoteConfig) -> Fetched | None:
        file_name = self._identity.file_name
        key = engine_key(file_name)
        deadline = time.monotonic() + config.wait_seconds
        delay = _FIRST_POLL
        waited_for: str | None = None
        while True:
            try:
                received = receive(
                    objects, key, file_name, self._identity, self._verify, self._store
                )
            except (EngineCacheError, TooLarge) as error:
                self._refused = True
                self._warn(
                    f"refused the remote engine {objects.url(key)}, building locally: {error}"
                )
                if self._lease is not None:
                    self._lease.release()
                    self._lease = None
                return None
            if received is not None:
                if self._lease is not None:  # published between our GET and our lease
                    self._lease.release()
                    self._lease = None
                verified, _mapped = received
                references = verified.references
                # What TensorRT reads is a verified copy in this process's memory, as for a local
                # entry; the receiver's own view of the file is a mapping, never handed on.
                try:
                    saved = self._store.read(self._identity)
                except EngineCacheError as error:
                    self._refused = True
                    self._warn(f"the fetched entry {file_name} changed after it was saved: {error}")
                    return None
                if saved is None:
                    return None
                return Fetched(Path(saved.path), saved, references)
            if self._lease is not None:
                return None
            state = leases.newest(objects, file_name)
            if state is None or state.expired(time.time()):
                if not self.can_publish:
                    return None  # a read-only node builds for itself and never holds a lease
                generation = 0 if state is None else state.generation + 1
                self._lease = leases.try_acquire(
                    objects, file_name, generation, config.lease_seconds
                )
                if self._lease is not None:
                    if state is not None:
                        self._lease.took_over_from = state.holder
                    continue  # look once more: the holder may have published and released
            elif state is not None:
                waited_for = state.holder
            if time.monotonic() >= deadline:
                self._warn(
                    f"waited {config.wait_seconds:g} s for {waited_for or 'another node'} to "
                    f"publish {objects.url(key)}; building locally"
                )
                return None
            time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(delay * 1.5, _LONGEST_POLL)

    def publish(self, path: str | Path) -> Publication:
        """Publishes the entry just saved at ``path`` (create-only; never replaces an object) and
        says what happened: PUBLISHED, ALREADY_PRESENT, or NOT_PUBLISHED with the reason (no
        remote cache, the store failed, this open refused the remote object, or this node may
        not publish). A failure of the store also gives the open's one RemoteCacheWarning."""
        config = self._config
        url = None if config is None else config.object_url(engine_key(self._identity.file_name))
        reason = self._not_publishing()
        if reason is not None or config is None:
            return Publication(PublishOutcome.NOT_PUBLISHED, url, reason or "no remote cache")
        try:
            objects = self._objects or RemoteObjects(config)
            return publish_bytes(
                objects, self._identity.file_name, Path(path).read_bytes(), self._signing
            )
        except RemoteUnavailable as error:
            self._unavailable(error)
            return Publication(PublishOutcome.NOT_PUBLISHED, url, str(error))

    def _not_publishing(self) -> str | None:
        """Why this open publishes nothing, or None when it may publish."""
        if self._config is None:
            return "no remote cache is configured"
        if not self._usable:
            return f"the remote cache {self._config.url} was unavailable during this open"
        if self._refused:
            return "this open refused the remote object for the entry (see its RemoteCacheWarning)"
        if not self.can_publish:
            return "this node trusts only signed engines but has no signing key"
        return None


def session(remote: str | None, store: Any, identity: Any) -> FleetSession:
    return FleetSession(remote, store, identity)

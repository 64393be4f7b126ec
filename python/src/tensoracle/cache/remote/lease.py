"""Build leases: one node of a fleet builds an engine while the others wait for its object.

S3 offers create-only writes (``If-None-Match: *``) but, on some compatible stores, no working
compare-and-swap (``If-Match``). A lease is therefore a numbered series of objects,
``leases/<entry>/<generation>``, each created create-only and never rewritten:

- A node that finds no lease creates generation 0. Exactly one creator of a given generation
  succeeds; the others see 412 and wait.
- The holder writes its name and an expiry (``expires_at``, Unix seconds, the holder's clock)
  into the object, builds, publishes the engine, then deletes the lease objects.
- While it builds, the holder renews the lease every third of the lease time by creating the
  next generation itself (same holder, new expiry) and deleting the one before. A holder that
  stops renewing (killed, paused, cut off from the store) is overtaken at most one lease time
  after its last renewal.
- A waiter that finds the newest generation expired (or unreadable) takes over by creating the
  next generation: again exactly one taker succeeds. No object is ever replaced, so no
  compare-and-swap is needed.

What the lease guarantees, and what it does not: at any time at most one node holds the newest
generation. A holder overtaken while still alive (a paused VM, a lost connection) is not
stopped, so two nodes can build the same engine after a takeover; that only wastes work,
because publishing is create-only (the first object stays, the second PUT gets 412) and every
download is verified.
Clock skew between nodes moves a takeover earlier or later by the skew; it never breaks
correctness. Lease objects of holders that died stay until the next holder of that entry
releases (which deletes every generation it saw).
"""

from __future__ import annotations

import json
import math
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

from tensoracle.cache.remote.objects import LEASES, RemoteObjects, RemoteUnavailable, TooLarge

_GENERATION_DIGITS = 10
_READ_ATTEMPTS = 5
# A lease object is about 100 bytes of JSON; a larger one is not read.
_MAX_LEASE_BYTES = 4096


def holder_name() -> str:
    """host:pid:random, unique per lease attempt."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def lease_prefix(file_name: str) -> str:
    return f"{LEASES}{file_name}/"


@dataclass(frozen=True)
class LeaseState:
    generation: int
    holder: str
    expires_at: float  # Unix seconds; 0 when the object could not be read

    def expired(self, now: float) -> bool:
        return now >= self.expires_at


@dataclass
class Lease:
    """A held lease; ``release`` deletes it and the older generations seen."""

    objects: RemoteObjects
    file_name: str
    generation: int
    holder: str
    expires_at: float
    took_over_from: str | None = None
    released: bool = False

    def release(self) -> None:
        if self.released:
            return
        self.released = True
        prefix = lease_prefix(self.file_name)
        keys = sorted(info.key for info in self.objects.list(prefix))
        for key in keys:
            if _generation(key, prefix) <= self.generation:
                self.objects.delete(key)


def _generation(key: str, prefix: str) -> int:
    try:
        return int(key[len(prefix) :])
    except ValueError:
        return -1


def newest(objects: RemoteObjects, file_name: str) -> LeaseState | None:
    """The newest lease generation of an entry, or None when there is no lease."""
    prefix = lease_prefix(file_name)
    # A renewing holder deletes the generation before its newest: when the key listed as newest
    # is gone by the time it is read, list again rather than report "no lease".
    for _attempt in range(_READ_ATTEMPTS):
        listed = [(_generation(info.key, prefix), info.key) for info in objects.list(prefix)]
        listed = [item for item in listed if item[0] >= 0]
        if not listed:
            return None
        generation, key = max(listed)
        try:
            body = objects.get_small(key, _MAX_LEASE_BYTES)
        except TooLarge:
            return LeaseState(generation, "(unreadable lease)", 0.0)
        if body is None:
            continue
        try:
            # At most _MAX_LEASE_BYTES of JSON: a nesting deep enough to exhaust the parser is a
            # RecursionError, and the lease is as unreadable as any other malformed one.
            document: Any = json.loads(body)
            holder, expires_at = document["holder"], float(document["expires_at"])
            if not isinstance(holder, str) or not math.isfinite(expires_at):
                raise ValueError("holder must be a string and expires_at a finite number")
            return LeaseState(generation, holder, expires_at)
        except (ValueError, KeyError, TypeError, OverflowError, RecursionError):
            return LeaseState(generation, "(unreadable lease)", 0.0)
    return None  # released while we looked (the engine is published, or its holder gave up)


def lease_key(file_name: str, generation: int) -> str:
    return f"{lease_prefix(file_name)}{generation:0{_GENERATION_DIGITS}d}"


def try_acquire(
    objects: RemoteObjects,
    file_name: str,
    generation: int,
    seconds: float,
    holder: str | None = None,
) -> Lease | None:
    """Creates lease ``generation`` (create-only); None when another node created it first."""
    holder = holder or holder_name()
    expires_at = time.time() + seconds
    body = json.dumps(
        {"holder": holder, "expires_at": expires_at, "lease_seconds": seconds}, sort_keys=True
    ).encode()
    if not objects.create(lease_key(file_name, generation), body):
        return None
    return Lease(objects, file_name, generation, holder, expires_at)


class Renewal:
    """Keeps a held lease alive while its holder builds: every third of ``seconds`` it creates
    the next generation (create-only, same holder) and deletes the previous one. It stops for
    good when another node created that generation first (the lease was taken over: this node
    goes on building, and publishing stays create-only) or when the store fails."""

    def __init__(self, lease: Lease, seconds: float) -> None:
        self._lease = lease
        self._seconds = seconds
        self._stop = threading.Event()
        self.renewals = 0
        self.lost = False
        self._thread = threading.Thread(target=self._run, name="tensoracle-lease", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        lease = self._lease
        while not self._stop.wait(self._seconds / 3):
            try:
                renewed = try_acquire(
                    lease.objects,
                    lease.file_name,
                    lease.generation + 1,
                    self._seconds,
                    lease.holder,
                )
                if renewed is None:
                    self.lost = True
                    return
                previous = lease.generation
                lease.generation, lease.expires_at = renewed.generation, renewed.expires_at
                self.renewals += 1
                lease.objects.delete(lease_key(lease.file_name, previous))
            except RemoteUnavailable:
                return  # the lease runs out; the build and its publishing go on

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

"""Build leases: one node of a fleet builds an engine while the others wait for its object.

S3 offers create-only writes (``If-None-Match: *``) but, on some compatible stores, no working
compare-and-swap (``If-Match``). A lease is therefore a numbered series of objects,
``leases/<entry>/<generation>``, each created create-only and never rewritten:

- A node that finds no lease creates generation 0. Exactly one creator of a given generation
  succeeds; the others see 412 and wait.
- The holder writes its name and an expiry (``expires_at``, Unix seconds, the holder's clock)
  into the object, builds, publishes the engine, then deletes the lease objects.
- A waiter that finds the newest generation expired (or unreadable) takes over by creating the
  next generation: again exactly one taker succeeds. No object is ever replaced, so no
  compare-and-swap is needed.

What the lease guarantees, and what it does not: at any time at most one node holds the newest
generation. A holder that outlives its expiry (a slow build, a paused VM) is not stopped, so two
nodes can build the same engine after a takeover; that only wastes work, because publishing is
create-only (the first object stays, the second PUT gets 412) and every download is verified.
Clock skew between nodes moves a takeover earlier or later by the skew; it never breaks
correctness. Lease objects of holders that died stay until the next holder of that entry
releases (which deletes every generation it saw).
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from dataclasses import dataclass
from typing import Any

from tensoracle.remote.objects import LEASES, RemoteObjects

_GENERATION_DIGITS = 10


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
    generations = [(_generation(info.key, prefix), info.key) for info in objects.list(prefix)]
    generations = [item for item in generations if item[0] >= 0]
    if not generations:
        return None
    generation, key = max(generations)
    body = objects.get(key)
    if body is None:  # released between the listing and the read
        return None
    try:
        document: Any = json.loads(bytes(body))
        return LeaseState(generation, str(document["holder"]), float(document["expires_at"]))
    except (ValueError, KeyError, TypeError):
        return LeaseState(generation, "(unreadable lease)", 0.0)


def try_acquire(
    objects: RemoteObjects, file_name: str, generation: int, seconds: float
) -> Lease | None:
    """Creates lease ``generation`` (create-only); None when another node created it first."""
    holder = holder_name()
    expires_at = time.time() + seconds
    body = json.dumps(
        {"holder": holder, "expires_at": expires_at, "lease_seconds": seconds}, sort_keys=True
    ).encode()
    key = f"{lease_prefix(file_name)}{generation:0{_GENERATION_DIGITS}d}"
    if not objects.create(key, body):
        return None
    return Lease(objects, file_name, generation, holder, expires_at)

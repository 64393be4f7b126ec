"""A node that took the fleet's build lease gives it back on every way out of the open, against
the real S3 server: when the store fails after the lease was taken (a download cut off mid-body),
no lease object stays behind and another node leases the entry at once."""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from cutting_proxy import cutting_proxy
from remote_support import REFERENCES, Fleet, in_process_fleet

from tensoracle import RemoteCacheWarning, _core
from tensoracle.cache.remote import fleet as fleet_module
from tensoracle.cache.remote import lease as leases
from tensoracle.cache.remote.config import configure
from tensoracle.cache.remote.fleet import FleetSession
from tensoracle.cache.remote.objects import RemoteObjects

pytestmark = pytest.mark.slow

PLAN_BYTES = 8 << 20


@pytest.fixture
def fleet(s3_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fleet:
    # A lease time long enough that waiting one out would show.
    return in_process_fleet(s3_server, tmp_path, monkeypatch, TENSORACLE_REMOTE_LEASE_SECONDS="600")


def engine_file(directory: Path) -> tuple[Any, bytes]:
    """(identity, bytes of its engine file as the store's save writes it)."""
    identity = _core.make_identity({"name": "leased", "graph_version": "1"})
    path = _core.Store(str(directory / "source")).save(
        identity, REFERENCES, bytes(range(256)) * (PLAN_BYTES // 256)
    )
    return identity, Path(path).read_bytes()


def lease_keys(fleet: Fleet) -> list[str]:
    return [key for key in fleet.object_keys() if key.startswith("leases/")]


def publish_once_leased(
    fleet: Fleet, monkeypatch: pytest.MonkeyPatch, key: str, data: bytes
) -> list[int]:
    """Right after this node takes the lease, another node publishes the entry straight to the
    server (so this node's second look downloads it, through whatever endpoint it uses); returns
    the generations this node leased."""
    taken: list[int] = []
    real = leases.try_acquire

    def acquire(objects: RemoteObjects, file_name: str, generation: int, *args: Any) -> Any:
        lease = real(objects, file_name, generation, *args)
        if lease is not None:
            taken.append(generation)
            assert lease_keys(fleet) == [leases.lease_key(file_name, generation)]
            fleet.replace(key, data)
        return lease

    monkeypatch.setattr(fleet_module.leases, "try_acquire", acquire)
    return taken


def test_a_download_cut_off_after_the_lease_was_taken_releases_it(
    fleet: Fleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    identity, data = engine_file(tmp_path)
    key = f"engines/{identity.file_name}"
    taken = publish_once_leased(fleet, monkeypatch, key, data)
    store = _core.Store(str(tmp_path / "node"))
    limit = 3 << 20  # every answer stops there: the engine is 8 MiB, lease answers are small
    with cutting_proxy(fleet.server.port, limit) as endpoint:
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        monkeypatch.setenv("TENSORACLE_REMOTE_RETRIES", "1")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with FleetSession(fleet.url, store, identity) as session:
                assert session.fetch() is None  # this node builds locally
                held = lease_keys(fleet)
            left = lease_keys(fleet)

    assert taken == [0]
    [warning] = [str(item.message) for item in caught if item.category is RemoteCacheWarning]
    assert "remote engine cache unavailable, building locally" in warning
    assert held == []  # given back as soon as the store failed, not only at the end
    assert left == []
    # Another node leases the entry at once: generation 0 again, no takeover of a stale lease.
    monkeypatch.setenv("AWS_ENDPOINT_URL", fleet.server.endpoint)
    config = configure(fleet.url)
    assert config is not None
    objects = RemoteObjects(config)
    assert leases.newest(objects, identity.file_name) is None
    started = time.monotonic()
    other = leases.try_acquire(objects, identity.file_name, 0, 600)
    assert other is not None
    assert time.monotonic() - started < 5
    other.release()
    assert lease_keys(fleet) == []


def test_a_release_the_store_refuses_is_warned_once_and_does_not_raise(
    fleet: Fleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    identity, _data = engine_file(tmp_path)
    store = _core.Store(str(tmp_path / "node"))
    with cutting_proxy(fleet.server.port, 1 << 20) as endpoint:
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        monkeypatch.setenv("TENSORACLE_REMOTE_RETRIES", "0")
        session = FleetSession(fleet.url, store, identity).__enter__()
        assert session.fetch() is None  # no object: this node holds the lease and builds
        assert lease_keys(fleet) == [leases.lease_key(identity.file_name, 0)]
    # The store is gone (the proxy closed) by the time the open ends.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        session.__exit__(None, None, None)
        session.__exit__(None, None, None)  # a second exit finds nothing left to release

    [warning] = [str(item.message) for item in caught if item.category is RemoteCacheWarning]
    assert "remote engine cache unavailable" in warning
    assert "LIST" in warning
    # Left to expire: the next holder's release removes it.
    assert lease_keys(fleet) == [leases.lease_key(identity.file_name, 0)]

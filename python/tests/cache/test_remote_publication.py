"""What the fleet's publish says it did, against the real S3 server: published by this call,
already there (the object left as it was), or not published with the reason."""

from __future__ import annotations

import socket
import warnings
from pathlib import Path
from typing import Any

import pytest
from remote_support import REFERENCES, Fleet, in_process_fleet, make_keys

from tensoracle import RemoteCacheWarning, _core
from tensoracle.cache.remote.config import configure
from tensoracle.cache.remote.fleet import FleetSession, publish_bytes
from tensoracle.cache.remote.objects import RemoteObjects
from tensoracle.cache.remote.publication import Publication, PublishOutcome

pytestmark = pytest.mark.slow


@pytest.fixture
def fleet(s3_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fleet:
    return in_process_fleet(s3_server, tmp_path, monkeypatch)


def saved_entry(tmp_path: Path, name: str = "published") -> tuple[Any, Any, Path]:
    """(store, identity, path) of an entry saved locally."""
    identity = _core.make_identity({"name": name, "graph_version": "1"})
    store = _core.Store(str(tmp_path / "node"))
    path = Path(store.save(identity, REFERENCES, bytes(range(256)) * 64))
    return store, identity, path


def publish(
    remote: str | None, store: Any, identity: Any, path: Path
) -> tuple[Publication, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with FleetSession(remote, store, identity) as session:
            result = session.publish(path)
    return result, [str(item.message) for item in caught if item.category is RemoteCacheWarning]


def test_the_first_publish_publishes_and_the_second_finds_it_there(fleet: Fleet, tmp_path: Path):
    store, identity, path = saved_entry(tmp_path)
    key = f"engines/{identity.file_name}"
    url = f"{fleet.url}/{key}"

    first, warned = publish(fleet.url, store, identity, path)
    assert first == Publication(PublishOutcome.PUBLISHED, url)
    assert (first.published, first.present, warned) == (True, True, [])
    assert fleet.read(key) == path.read_bytes()

    fleet.replace(key, b"someone else's object")  # what is there now is left as it is
    second, warned = publish(fleet.url, store, identity, path)
    assert second == Publication(PublishOutcome.ALREADY_PRESENT, url)
    assert (second.published, second.present, warned) == (False, True, [])
    assert fleet.read(key) == b"someone else's object"


def test_publish_bytes_says_published_then_already_present(fleet: Fleet, tmp_path: Path):
    _store, identity, path = saved_entry(tmp_path)
    config = configure(fleet.url)
    assert config is not None
    objects = RemoteObjects(config)
    data = path.read_bytes()

    assert (
        publish_bytes(objects, identity.file_name, data, None).outcome is PublishOutcome.PUBLISHED
    )
    again = publish_bytes(objects, identity.file_name, data, None)
    assert again.outcome is PublishOutcome.ALREADY_PRESENT
    assert again.url == f"{fleet.url}/engines/{identity.file_name}"


def test_without_a_remote_cache_nothing_is_published(tmp_path: Path, monkeypatch: Any):
    monkeypatch.delenv("TENSORACLE_REMOTE", raising=False)
    store, identity, path = saved_entry(tmp_path)

    result, warned = publish("", store, identity, path)

    assert result.outcome is PublishOutcome.NOT_PUBLISHED
    assert result.url is None
    assert result.reason == "no remote cache is configured"
    assert warned == []


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_store_that_fails_gives_not_published_with_its_error(
    fleet: Fleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.setenv("TENSORACLE_REMOTE_RETRIES", "0")
    monkeypatch.setenv("TENSORACLE_REMOTE_CONNECT_SECONDS", "1")
    store, identity, path = saved_entry(tmp_path)

    result, warned = publish(fleet.url, store, identity, path)

    assert result.outcome is PublishOutcome.NOT_PUBLISHED
    assert result.url == f"{fleet.url}/engines/{identity.file_name}"
    assert result.reason is not None
    assert "PUT (create-only)" in result.reason
    assert len(warned) == 1
    assert "remote engine cache unavailable" in warned[0]


def test_a_verify_only_node_does_not_publish_and_says_why(
    fleet: Fleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    _signing, verify = make_keys(tmp_path, "fleet")
    monkeypatch.setenv("TENSORACLE_REMOTE_VERIFY_KEY", str(verify))
    store, identity, path = saved_entry(tmp_path)

    result, warned = publish(fleet.url, store, identity, path)

    assert result.outcome is PublishOutcome.NOT_PUBLISHED
    assert result.reason is not None
    assert "no signing key" in result.reason
    assert warned == []
    assert fleet.object_keys() == []


def test_after_refusing_the_remote_object_the_open_does_not_publish(fleet: Fleet, tmp_path: Path):
    store, identity, path = saved_entry(tmp_path)
    key = f"engines/{identity.file_name}"
    fleet.replace(key, b"not an engine at all, but long enough to hold a preamble")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with FleetSession(fleet.url, store, identity) as session:
            assert session.fetch() is None
            result = session.publish(path)

    assert result.outcome is PublishOutcome.NOT_PUBLISHED
    assert result.reason is not None
    assert "refused the remote object" in result.reason
    assert any("refused the remote engine" in str(item.message) for item in caught)
    assert fleet.read(key).startswith(b"not an engine")

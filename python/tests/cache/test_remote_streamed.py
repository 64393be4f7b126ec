"""The remote tier's streamed download against the real S3 server: an object is written into the
store's temporary file as it arrives and becomes the entry only once verified, byte for byte the
file the store's own save writes; refused or cut off, it leaves no file behind and a local entry
as it was."""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cutting_proxy import cutting_proxy
from remote_support import REFERENCES, Fleet, in_process_fleet, make_keys, store_files

from tensoracle import RemoteCacheWarning, _core
from tensoracle.cache.remote.fleet import Fetched, FleetSession

pytestmark = pytest.mark.slow

PLAN_BYTES = 8 << 20


@dataclass
class Engine:
    identity: Any
    plan: bytes
    file: bytes  # as the store's save wrote it

    @property
    def key(self) -> str:
        return f"engines/{self.identity.file_name}"


def make_engine(directory: Path, name: str = "streamed", seed: int = 1) -> Engine:
    identity = _core.make_identity({"name": name, "graph_version": "1"})
    plan = os.urandom(PLAN_BYTES) if seed else bytes(PLAN_BYTES)
    path = _core.Store(str(directory / f"source-{name}-{seed}")).save(identity, REFERENCES, plan)
    return Engine(identity, plan, Path(path).read_bytes())


@pytest.fixture
def fleet(s3_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fleet:
    return in_process_fleet(s3_server, tmp_path, monkeypatch)


def fetch(fleet: Fleet, store: Any, engine: Engine) -> tuple[Fetched | None, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with FleetSession(fleet.url, store, engine.identity) as session:
            fetched = session.fetch()
    return fetched, [str(item.message) for item in caught if item.category is RemoteCacheWarning]


def signed(engine: Engine, signing_key: Path) -> bytes:
    key = _core.SigningKey.from_pem_file(str(signing_key))
    return engine.file + _core.signature_trailer(key, engine.identity.file_name, engine.file)


@pytest.mark.parametrize("signature", ["unsigned", "signed"])
def test_a_pulled_engine_is_the_file_the_store_saves(
    fleet: Fleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signature: str
):
    engine = make_engine(tmp_path)
    if signature == "signed":
        signing, verify = make_keys(tmp_path, "fleet")
        monkeypatch.setenv("TENSORACLE_REMOTE_VERIFY_KEY", str(verify))
        fleet.replace(engine.key, signed(engine, signing))
    else:
        fleet.replace(engine.key, engine.file)
    store = _core.Store(str(tmp_path / "node"))

    fetched, caught = fetch(fleet, store, engine)

    assert caught == []
    assert fetched is not None
    assert fetched.path == Path(store.entry_path(engine.identity))
    assert fetched.path.read_bytes() == engine.file
    assert bytes(fetched.plan) == engine.plan
    assert fetched.references == REFERENCES
    assert store_files(store.directory) == [engine.identity.file_name]
    saved = store.read(engine.identity)
    assert saved is not None
    assert bytes(saved.plan) == engine.plan


def hostile_object(kind: str, engine: Engine, tmp_path: Path, monkeypatch: Any) -> bytes:
    """The object a writer with access to the bucket put there, and the key settings it meets."""
    if kind == "flipped plan byte":
        damaged = bytearray(engine.file)
        damaged[-1000] ^= 0x01
        return bytes(damaged)
    if kind == "truncated":
        return engine.file[: len(engine.file) // 2]
    if kind == "other conditions":
        return make_engine(tmp_path, "someone-else").file
    if kind == "oversized":
        monkeypatch.setenv("TENSORACLE_REMOTE_MAX_ENGINE_BYTES", str(len(engine.file) - 1))
        return engine.file
    signing, verify = make_keys(tmp_path, "fleet")
    monkeypatch.setenv("TENSORACLE_REMOTE_VERIFY_KEY", str(verify))
    if kind == "unsigned with a verify key":
        return engine.file
    stranger, _ = make_keys(tmp_path, "stranger")
    if kind == "signed by another key":
        return signed(engine, stranger)
    changed = bytearray(signed(engine, signing))
    if kind == "signed, then a plan byte changed":
        changed[len(engine.file) - 1000] ^= 0x01
    else:
        assert kind == "signed, then a header byte changed"
        changed[30] ^= 0x01
    return bytes(changed)


REFUSALS = {
    "flipped plan byte": "checksum",
    "truncated": "truncated",
    "other conditions": "other conditions",
    "oversized": "more than the limit",
    "unsigned with a verify key": "not signed",
    "signed by another key": "does not accept",
    # Format 2: the signature is over the header, whose chunk digests vouch for the plan.
    "signed, then a plan byte changed": "does not hold what its signature vouches for: chunk",
    "signed, then a header byte changed": "does not accept",
}


@pytest.mark.parametrize("kind", sorted(REFUSALS))
def test_a_refused_object_leaves_no_file_and_the_local_entry_untouched(
    fleet: Fleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
):
    engine = make_engine(tmp_path)
    hostile = hostile_object(kind, engine, tmp_path, monkeypatch)
    fleet.replace(engine.key, hostile)
    store = _core.Store(str(tmp_path / "node"))
    older = make_engine(tmp_path, seed=0)  # a good entry of the same identity, saved before
    good = Path(store.save(engine.identity, REFERENCES, older.plan)).read_bytes()

    fetched, caught = fetch(fleet, store, engine)

    assert fetched is None
    [warning] = caught
    assert "refused the remote engine" in warning
    assert fleet.url + "/" + engine.key in warning
    assert REFUSALS[kind] in warning
    assert store_files(store.directory) == [engine.identity.file_name]  # no temporary file left
    assert Path(store.entry_path(engine.identity)).read_bytes() == good
    assert fleet.read(engine.key) == hostile  # left for an operator to look at


def test_a_download_cut_off_mid_stream_leaves_nothing(
    fleet: Fleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    engine = make_engine(tmp_path)
    fleet.replace(engine.key, engine.file)
    store = _core.Store(str(tmp_path / "node"))
    limit = 3 << 20  # every answer stops there: the plan is 8 MiB
    with cutting_proxy(fleet.server.port, limit) as endpoint:
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        monkeypatch.setenv("TENSORACLE_REMOTE_RETRIES", "1")  # 2 answers: at most 6 MiB
        fetched, caught = fetch(fleet, store, engine)

    assert fetched is None
    [warning] = caught
    assert "remote engine cache unavailable, building locally" in warning
    assert store_files(store.directory) == []
    assert not [key for key in fleet.object_keys() if key.startswith("leases/")]
    # The object itself was fine: straight from the server it is received whole.
    monkeypatch.setenv("AWS_ENDPOINT_URL", fleet.server.endpoint)
    fetched, caught = fetch(fleet, store, engine)
    assert caught == []
    assert fetched is not None
    assert fetched.path.read_bytes() == engine.file


def test_the_receiver_removes_its_temporary_file_when_aborted(tmp_path: Path):
    engine = make_engine(tmp_path)
    store = _core.Store(str(tmp_path / "node"))
    receiver = _core.RemoteReceiver(
        store, "s3://bucket/k", engine.identity.file_name, len(engine.file), engine.identity, None
    )
    receiver.feed(memoryview(engine.file)[: 1 << 20])
    temporary = receiver.temporary_path
    assert temporary is not None
    assert Path(temporary).parent == Path(store.directory)
    assert store_files(store.directory) == [Path(temporary).name]
    assert Path(temporary).stat().st_size == receiver.received == 1 << 20

    receiver.abort()

    assert receiver.temporary_path is None
    assert store_files(store.directory) == []
    with pytest.raises(RuntimeError, match="after finish or abort"):
        receiver.feed(b"more")

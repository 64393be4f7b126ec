"""The remote engine cache against a real S3 server (Ceph RADOS Gateway, started by the suite).

Every node is a separate process with its own local cache directory; the engines are real
TensorRT-RTX builds (no GPU needed to build).
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
import warnings
from pathlib import Path

import pytest
from engine_helpers import DECLARATION, IO, make_graph, write_weights
from remote_support import Fleet, finish, make_keys

import tensoracle

pytestmark = pytest.mark.slow


@pytest.fixture
def fleet(s3_server, tmp_path: Path) -> Fleet:
    made = Fleet(s3_server, tmp_path)
    write_weights(made.weights)
    return made


def engine_keys(fleet: Fleet) -> list[str]:
    return [key for key in fleet.object_keys() if key.startswith("engines/")]


def test_publish_then_pull_does_not_call_the_graph(fleet: Fleet):
    first = fleet.run("node-a")
    assert first["built"] is True
    assert first["warnings"] == []
    [key] = engine_keys(fleet)
    local = Path(first["path"])
    assert key == f"engines/{local.name}"
    assert fleet.read(key) == local.read_bytes()  # unsigned fleet: the object is the file
    assert not [key for key in fleet.object_keys() if key.startswith("leases/")]

    second = fleet.run("node-b")

    assert second["built"] is False
    assert second["warnings"] == []
    assert fleet.graph_calls() == 1
    pulled = Path(second["path"])
    assert pulled.parent == fleet.cache("node-b")
    assert pulled.read_bytes() == local.read_bytes()
    # Now a plain local hit on node b: no remote request is needed and the graph is not called.
    assert fleet.run("node-b", TENSORACLE_REMOTE="s3://no-such-bucket")["built"] is False


def test_four_cold_nodes_give_one_build_and_three_downloads(fleet: Fleet):
    nodes = [fleet.start(f"node-{index}") for index in range(4)]
    results = [finish(node) for node in nodes]

    assert sorted(result["built"] for result in results) == [False, False, False, True]
    assert fleet.graph_calls() == 1
    contents = {Path(result["path"]).read_bytes() for result in results}
    assert len(contents) == 1
    assert len(engine_keys(fleet)) == 1
    assert all(result["warnings"] == [] for result in results)
    assert not [key for key in fleet.object_keys() if key.startswith("leases/")]


def start_long_build(fleet: Fleet, node: str, sleep: str, lease: str) -> subprocess.Popen[str]:
    """Starts a node whose graph sleeps ``sleep`` s; returns once it holds the lease and builds."""
    marker = fleet.root / f"{node}-building"
    holder = fleet.start(
        node,
        NODE_BUILD_MARKER=str(marker),
        NODE_BUILD_SLEEP=sleep,
        TENSORACLE_REMOTE_LEASE_SECONDS=lease,
    )
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert holder.poll() is None, holder.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return holder


def newest_lease(fleet: Fleet) -> dict:
    """The newest lease generation's document, with its key. The holder may renew (and remove
    the generation just listed) between the listing and the read: then list again."""
    for _ in range(5):
        keys = [key for key in fleet.object_keys() if key.startswith("leases/")]
        assert keys, "no lease object"
        try:
            return {**json.loads(fleet.read(max(keys))), "key": max(keys)}
        except FileNotFoundError:
            continue
    raise AssertionError("the newest lease generation vanished five times while it was read")


def test_a_long_build_renews_its_lease_and_the_others_wait(fleet: Fleet):
    holder = start_long_build(fleet, "node-a", sleep="8", lease="3")
    first = newest_lease(fleet)
    waiter = fleet.start("node-b", TENSORACLE_REMOTE_LEASE_SECONDS="3")
    time.sleep(4)  # past the first generation's expiry
    renewed = newest_lease(fleet)
    assert renewed["key"] > first["key"]  # a later generation...
    assert renewed["holder"] == first["holder"]  # ...still held by the builder
    assert renewed["expires_at"] > first["expires_at"]

    built, waited = finish(holder), finish(waiter)

    assert built["built"] is True
    assert waited["built"] is False  # it waited for the renewed lease instead of taking over
    assert waited["warnings"] == []
    assert fleet.graph_calls() == 1
    assert Path(waited["path"]).read_bytes() == Path(built["path"]).read_bytes()
    assert not [key for key in fleet.object_keys() if key.startswith("leases/")]


def test_a_killed_lease_holder_is_taken_over_after_expiry(fleet: Fleet):
    holder = start_long_build(fleet, "node-a", sleep="120", lease="4")
    lease = newest_lease(fleet)
    assert lease["holder"].split(":")[1] == str(holder.pid)
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)

    taker = fleet.run("node-b", TENSORACLE_REMOTE_LEASE_SECONDS="4")

    assert taker["built"] is True
    assert fleet.call_times()[1] >= lease["expires_at"]  # it waited for the expiry...
    assert taker["warnings"] == []  # ...quietly, then took over and published
    assert fleet.graph_calls() == 2  # the killed build and the taker's
    [key] = engine_keys(fleet)
    assert fleet.read(key) == Path(taker["path"]).read_bytes()
    assert not [key for key in fleet.object_keys() if key.startswith("leases/")]
    assert fleet.run("node-c")["built"] is False


@pytest.mark.parametrize("damage", ["flipped byte", "truncated"])
def test_a_damaged_remote_object_is_refused_and_never_overwritten(fleet: Fleet, damage: str):
    fleet.run("node-a")
    [key] = engine_keys(fleet)
    data = bytearray(fleet.read(key))
    if damage == "flipped byte":
        data[-10] ^= 0x01
    else:
        del data[len(data) // 2 :]
    fleet.replace(key, bytes(data))

    result = fleet.run("node-b")

    assert result["built"] is True
    [warning] = result["warnings"]
    assert key in warning
    assert "refused" in warning
    assert ("checksum" if damage == "flipped byte" else "truncated") in warning
    assert fleet.read(key) == bytes(data)  # left as it was for an operator to look at
    local = Path(result["path"])
    assert local.read_bytes() != bytes(data)
    assert [path.name for path in fleet.cache("node-b").glob("*.engine")] == [local.name]


def test_signatures_are_checked_and_bad_or_missing_ones_refused(fleet: Fleet, tmp_path: Path):
    signing, verify = make_keys(tmp_path, "fleet")
    stranger, _ = make_keys(tmp_path, "stranger")
    signed_node = {
        "TENSORACLE_REMOTE_SIGNING_KEY": str(signing),
        "TENSORACLE_REMOTE_VERIFY_KEY": str(verify),
    }
    reader = {"TENSORACLE_REMOTE_VERIFY_KEY": str(verify)}

    published = fleet.run("signer", **signed_node)
    [key] = engine_keys(fleet)
    signed_object = fleet.read(key)
    assert signed_object[-8:] == b"TSRCLSIG"
    assert signed_object[:-72] == Path(published["path"]).read_bytes()
    pulled = fleet.run("reader", **reader)  # a read-only node: no signing key
    assert pulled["built"] is False
    assert pulled["warnings"] == []
    # The key given as its PEM text in the variable, as the deployment paths take it.
    pem_reader = {"TENSORACLE_REMOTE_VERIFY_KEY": verify.read_text()}
    assert pem_reader["TENSORACLE_REMOTE_VERIFY_KEY"].startswith("-----BEGIN PUBLIC KEY")
    pulled_with_text = fleet.run("reader-pem", **pem_reader)
    assert pulled_with_text["built"] is False
    assert pulled_with_text["warnings"] == []

    # Unsigned: the engine alone, as a writer without the key would put it.
    fleet.replace(key, signed_object[:-72])
    unsigned = fleet.run("reader-2", **reader)
    assert unsigned["built"] is True
    [warning] = unsigned["warnings"]
    assert key in warning
    assert "not signed" in warning
    assert fleet.read(key) == signed_object[:-72]  # a read-only node never publishes

    # Signed by a key the nodes do not trust.
    fleet.run(
        "stranger",
        TENSORACLE_REMOTE=fleet.url + "-stranger",
        TENSORACLE_REMOTE_SIGNING_KEY=str(stranger),
    )
    strange_fleet = Fleet(fleet.server, fleet.root, prefix=fleet.prefix + "-stranger")
    fleet.replace(key, strange_fleet.read(key))
    refused = fleet.run("reader-3", **reader)
    assert refused["built"] is True
    [warning] = refused["warnings"]
    assert key in warning
    assert "does not accept" in warning


def remote_cache_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [
        str(item.message)
        for item in caught
        if issubclass(item.category, tensoracle.RemoteCacheWarning)
    ]


def open_with(monkeypatch: pytest.MonkeyPatch, fleet: Fleet, **variables: str):
    for name, value in fleet.environment("node", **variables).items():
        monkeypatch.setenv(name, value)
    calls: list[int] = []
    started = time.monotonic()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prepared = tensoracle.prepare_engine(
            make_graph(fleet.weights, calls),
            DECLARATION,
            name="fleet",
            graph_version="1",
            weights=[fleet.weights],
            io=IO,
        )
    return prepared, calls, remote_cache_warnings(caught), time.monotonic() - started


def closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize(
    "failure",
    ["unreachable", "wrong secret", "no such bucket"],
)
def test_an_unusable_store_gives_one_warning_and_a_local_build(
    fleet: Fleet, monkeypatch: pytest.MonkeyPatch, failure: str
):
    variables = {"TENSORACLE_REMOTE_RETRIES": "1", "TENSORACLE_REMOTE_CONNECT_SECONDS": "1"}
    if failure == "unreachable":
        variables["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{closed_port()}"
    elif failure == "wrong secret":
        variables["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
    else:
        variables["TENSORACLE_REMOTE"] = "s3://no-such-bucket/prefix"

    prepared, calls, caught, elapsed = open_with(monkeypatch, fleet, **variables)

    assert prepared.built is True
    assert calls == [1]
    assert len(caught) == 1, caught
    assert "remote engine cache unavailable, building locally" in caught[0]
    assert elapsed < 60
    assert engine_keys(fleet) == []


def test_the_remote_argument_overrides_the_environment(
    fleet: Fleet, monkeypatch: pytest.MonkeyPatch
):
    for name, value in fleet.environment("node", TENSORACLE_REMOTE="s3://no-such-bucket").items():
        monkeypatch.setenv(name, value)

    def prepare(remote: str) -> tensoracle.PreparedEngine:
        return tensoracle.prepare_engine(
            make_graph(fleet.weights),
            DECLARATION,
            name="fleet",
            graph_version="1",
            weights=[fleet.weights],
            io=IO,
            remote=remote,
            force_rebuild=True,
        )

    with pytest.raises(ValueError, match="not an s3://BUCKET"):
        prepare("https://example.com/bucket")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prepare("")  # the remote tier turned off for this call
        assert engine_keys(fleet) == []
        prepared = prepare(fleet.url)
    assert remote_cache_warnings(caught) == []
    assert engine_keys(fleet) == [f"engines/{prepared.path.name}"]


def test_the_docs_example_publishes_to_the_named_remote(
    s3_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from docs_examples import run_blocks

    for name, value in s3_server.environment().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TENSORACLE_REMOTE", raising=False)
    weights = write_weights(tmp_path / "model.safetensors")
    namespace = {
        "__name__": "__docs__",
        "tensoracle": tensoracle,
        "graph": make_graph(weights),
        "declaration": DECLARATION,
        "weights": weights,
        "io": IO,
    }

    run_blocks("docs/remote-cache.md", namespace)

    fleet = Fleet(s3_server, tmp_path, prefix="fleet-a")
    assert engine_keys(fleet) == [f"engines/{namespace['prepared'].path.name}"]

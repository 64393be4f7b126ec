"""Hostile bytes in a cache folder or in the fleet's bucket, written as someone with write access
would: every command and API path gives a clean error or a local build, never a crash, a
UnicodeDecodeError or a TypeError from data; and arguments the store or TensorRT would refuse
later are refused at the door, naming the field, before the graph is called."""

from __future__ import annotations

import json
import os
import re
import struct
from pathlib import Path
from typing import Any

import pytest
from cache_cli import run
from engine_helpers import DECLARATION, IO, make_graph, raising_graph, write_weights
from hostile_files import HOSTILE, engine_with_header_text

import tensoracle
from tensoracle import BuilderSettings, EngineBuild, InputShape, prepare_engine
from tensoracle.errors import CorruptEngineError


@pytest.fixture
def weights(tmp_path: Path) -> Path:
    return write_weights(tmp_path / "model.safetensors")


def prepare(weights: Path, graph: Any = raising_graph, **overrides: Any) -> Any:
    arguments: dict[str, Any] = {
        "name": "hostile",
        "graph_version": "1",
        "weights": [weights],
        "io": IO,
    }
    arguments.update(overrides)
    declaration = arguments.pop("declaration", DECLARATION)
    return prepare_engine(graph, declaration, **arguments)


def split_engine(data: bytes) -> tuple[dict[str, Any], bytes]:
    """(conditions, plan) of a saved engine file."""
    (length,) = struct.unpack_from("<Q", data, 12)
    header = json.loads(data[20 : 20 + length])
    return header["conditions"], data[20 + length :]


def hostile_copy(data: bytes, kind: str) -> bytes:
    conditions, plan = split_engine(data)
    return engine_with_header_text(conditions, HOSTILE[kind](), plan)


def assert_not_killed(completed: Any) -> None:
    """A command that dies from a signal (SIGSEGV: -11) has a negative return code."""
    assert completed.returncode >= 0, completed.stderr
    assert "Traceback" not in completed.stderr, completed.stderr


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_saved_header_is_corrupt_on_every_path(
    engine_cache: Path, weights: Path, kind: str
):
    path = prepare(weights, make_graph(weights)).path
    path.write_bytes(hostile_copy(path.read_bytes(), kind))

    def open_it() -> Any:
        return tensoracle.open_engine(
            raising_graph, DECLARATION, name="hostile", graph_version="1", weights=[weights], io=IO
        )

    for call in (lambda: prepare(weights), open_it):
        with pytest.raises(CorruptEngineError) as caught:
            call()
        message = str(caught.value)
        assert str(path) in message
        message.encode("utf-8")  # a str Python can print: valid UTF-8 all through

    # Another graph_version of the same name compares itself with the hostile entry, and builds.
    assert prepare(weights, make_graph(weights), graph_version="2").built is True

    for command in (
        ("cache", "list", "--cache-dir", str(engine_cache)),
        ("cache", "list", "--cache-dir", str(engine_cache), "--format", "table"),
        ("cache", "verify", "--cache-dir", str(engine_cache)),
        ("cache", "prune", "--cache-dir", str(engine_cache), "--max-size", "0", "--dry-run"),
        ("cache", "show", "--cache-dir", str(engine_cache), path.name),
    ):
        completed = run(*command)
        assert_not_killed(completed)
    listed = json.loads(run("cache", "list", "--cache-dir", str(engine_cache)).stdout)
    statuses = {entry["file_name"]: entry["status"] for entry in listed["entries"]}
    assert statuses[path.name] == "unrecognized"
    assert run("cache", "verify", "--cache-dir", str(engine_cache)).returncode == 1

    # The caller may rebuild over it.
    rebuilt = prepare(weights, make_graph(weights), force_rebuild=True)
    assert rebuilt.built is True
    assert rebuilt.path == path
    assert prepare(weights).built is False


def test_a_symlinked_entry_is_refused_and_its_target_untouched(
    engine_cache: Path, weights: Path, tmp_path: Path
):
    path = prepare(weights, make_graph(weights)).path
    target = tmp_path / "outside.engine"
    target.write_bytes(path.read_bytes())
    os.utime(target, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    path.unlink()
    path.symlink_to(target)

    with pytest.raises(CorruptEngineError, match="is a symbolic link"):
        prepare(weights)
    assert target.stat().st_mtime_ns == 1_000_000_000_000_000_000
    assert prepare(weights, make_graph(weights), force_rebuild=True).built is True
    assert not path.is_symlink()


def test_a_symlinked_lock_creates_nothing_outside_the_cache(
    engine_cache: Path, weights: Path, tmp_path: Path
):
    path = prepare(weights, make_graph(weights)).path
    lock = path.with_name(path.name + ".lock")
    lock.unlink()
    outside = tmp_path / "planted.lock"
    lock.symlink_to(outside)
    with pytest.raises(OSError, match="is a symbolic link"):
        prepare(weights)
    assert not outside.exists()


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: BuilderSettings(workspace_limit=2**64), "BuilderSettings.workspace_limit"),
        (lambda: InputShape.fixed((1, 2**63)), "InputShape.fixed shape"),
        (lambda: tensoracle.TensorSpec(DECLARATION_DTYPE(), (2**63,)), "TensorSpec.shape"),
        (
            lambda: EngineBuild(inputs={"x\ud800": InputShape.fixed((1,))}),
            "EngineBuild.inputs name",
        ),
    ],
)
def test_out_of_range_declarations_are_refused_naming_the_field(make: Any, field: str):
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        make()


def DECLARATION_DTYPE() -> Any:
    return next(iter(IO.inputs.values())).dtype


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({"name": "model\ud800"}, "name holds '\\ud800' at position 5"),
        ({"graph_version": "v" * (17 << 20)}, "graph_version is 17825792 bytes long"),
    ],
)
def test_out_of_range_arguments_are_refused_before_the_build(
    engine_cache: Path, weights: Path, overrides: dict[str, Any], words: str
):
    calls: list[int] = []
    with pytest.raises(ValueError, match=re.escape(words)):
        prepare(weights, make_graph(weights, calls), **overrides)
    assert calls == []


def test_a_cache_folder_name_that_is_not_text_is_refused_naming_the_variable(
    weights: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("XDG_CACHE_HOME", os.fsdecode(bytes(tmp_path) + b"/cache-\xff"))
    calls: list[int] = []
    with pytest.raises(ValueError, match=r"XDG_CACHE_HOME='.*cache-\\xff' is not valid UTF-8"):
        prepare(weights, make_graph(weights, calls))
    assert calls == []


# The same headers as objects in the fleet's bucket (a real Ceph S3 server).


@pytest.fixture
def fleet(s3_server, tmp_path: Path):
    from remote_support import Fleet

    made = Fleet(s3_server, tmp_path)
    write_weights(made.weights)
    return made


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_object_in_the_bucket_gives_a_local_build_on_every_node(
    fleet: Any, tmp_path: Path, kind: str
):
    from remote_support import make_keys

    published = fleet.run("node-a")
    [key] = [key for key in fleet.object_keys() if key.startswith("engines/")]
    hostile = hostile_copy(Path(published["path"]).read_bytes(), kind)
    fleet.replace(key, hostile)

    built = fleet.run("node-b")
    assert built["built"] is True
    [warning] = built["warnings"]
    assert key in warning
    assert "refused" in warning
    assert fleet.read(key) == hostile  # left for an operator to look at

    # A verify-only node refuses the unsigned object before decoding its header.
    _signing, verify = make_keys(tmp_path, "fleet")
    reader = fleet.run("reader", TENSORACLE_REMOTE_VERIFY_KEY=str(verify))
    assert reader["built"] is True
    [warning] = reader["warnings"]
    assert "not signed" in warning

    env = fleet.environment("cli")
    listed = run("cache", "list", "--remote", env=env)
    assert_not_killed(listed)
    [entry] = json.loads(listed.stdout)["entries"]
    assert entry["status"] == "unrecognized"
    pulled = run("cache", "pull", "--cache-dir", str(tmp_path / "pulled"), env=env)
    assert_not_killed(pulled)
    assert pulled.returncode == 1
    [refused] = json.loads(pulled.stdout)["refused"]
    assert key in refused["reason"]
    assert not (tmp_path / "pulled" / Path(key).name).exists()


@pytest.mark.slow
def test_a_large_garbage_object_is_refused_from_its_first_bytes(
    fleet: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from tensoracle import _core
    from tensoracle.cache.remote.config import configure
    from tensoracle.cache.remote.fleet import receive
    from tensoracle.cache.remote.objects import RemoteObjects

    key = "engines/garbage-0.engine"
    fleet.replace(key, b"\x00" * (64 << 20))
    for name, value in fleet.server.environment().items():
        monkeypatch.setenv(name, value)
    objects = RemoteObjects(configure(fleet.url))
    store = _core.Store(str(tmp_path / "node"))
    fed: list[int] = []
    real = _core.RemoteReceiver

    class Counting:
        """The real receiver, counting the bytes the download hands it."""

        def __init__(self, *args: Any) -> None:
            self.inner = real(*args)

        def feed(self, chunk: Any) -> None:
            fed.append(len(chunk))
            self.inner.feed(chunk)

        def abort(self) -> None:
            self.inner.abort()

    monkeypatch.setattr(_core, "RemoteReceiver", Counting)
    with pytest.raises(CorruptEngineError, match="not a tensoracle engine file"):
        receive(objects, key, "garbage-0.engine", None, None, store)
    assert 0 < sum(fed) <= 16 << 20  # refused from the first chunk, not after 64 MiB
    assert os.listdir(store.directory) == []  # no temporary file


@pytest.mark.slow
@pytest.mark.parametrize(
    "body",
    [
        b"[" * 2000 + b"]" * 2000,  # within 4 KiB, deeper than Python's recursion limit
        b'{"holder":"h","expires_at":' + b"9" * 400 + b"}",  # beyond a float
        b'{"holder":["h"],"expires_at":1}',
        b'{"holder":"h","expires_at":' + b"1" * 5000 + b"}",  # over the 4 KiB limit
    ],
    ids=["nested", "huge number", "mistyped holder", "oversized"],
)
def test_a_hostile_lease_object_reads_as_an_expired_lease(
    fleet: Any, monkeypatch: pytest.MonkeyPatch, body: bytes
):
    from tensoracle.cache.remote import lease as leases
    from tensoracle.cache.remote.config import configure
    from tensoracle.cache.remote.objects import RemoteObjects

    for name, value in fleet.server.environment().items():
        monkeypatch.setenv(name, value)
    objects = RemoteObjects(configure(fleet.url))
    fleet.replace(leases.lease_key("entry-0.engine", 3), body)
    state = leases.newest(objects, "entry-0.engine")
    assert state == leases.LeaseState(3, "(unreadable lease)", 0.0)
    assert state.expired(1.0)

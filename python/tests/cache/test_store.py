"""Tests of the engine cache store bindings in tensoracle._core, errors and processes included."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import pwd
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from engine_files import engine_file_bytes
from hypothesis import given, settings
from hypothesis import strategies as st

from tensoracle import _core
from tensoracle.errors import CorruptEngineError, EngineCacheError, EngineConditionError

CONDITIONS = {"name": "model", "graph_version": "1", "tf32": False, "shape": [1, -1, 2]}


def identity(**changes: object) -> _core.EngineIdentity:
    return _core.make_identity({**CONDITIONS, **changes})


@pytest.fixture
def store(tmp_path: Path) -> _core.Store:
    return _core.Store(str(tmp_path / "cache"))


def test_default_cache_directory_follows_xdg_then_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "/x/cache")
    monkeypatch.setenv("HOME", "/home/u")
    assert _core.default_cache_directory() == "/x/cache/tensoracle"
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    assert _core.default_cache_directory() == "/home/u/.cache/tensoracle"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.delenv("HOME")
    # As tensoracle 1.x's Path.home(): the user's home directory from the password database.
    expected = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "tensoracle"
    assert _core.default_cache_directory() == str(expected)


def test_identity_is_the_digest_of_canonical_conditions() -> None:
    ident = identity()
    canonical = json.dumps(CONDITIONS, sort_keys=True, separators=(",", ":"))
    assert ident.conditions == CONDITIONS
    assert ident.digest == hashlib.sha256(canonical.encode()).hexdigest()
    assert ident.file_name == f"model-{ident.digest}.engine"
    reordered = _core.make_identity(dict(reversed(list(CONDITIONS.items()))))
    assert reordered.file_name == ident.file_name
    assert identity(graph_version="2").file_name != ident.file_name
    assert _core.make_identity({"name": "a/b c"}).file_name.startswith("a_b_c-")


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.text(st.characters(blacklist_categories=("Cs",))),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.text(st.characters(blacklist_categories=("Cs",))), children, max_size=4
        )
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_canonical_json_matches_python_sorted_compact_dumps(value: object) -> None:
    """The documented Python spelling of canonical JSON gives the same bytes as the core."""
    conditions = {"name": "m", "value": value}
    spelled = json.dumps(conditions, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    ident = _core.make_identity(conditions)
    assert ident.conditions == conditions
    assert ident.digest == hashlib.sha256(spelled.encode()).hexdigest()


@pytest.mark.parametrize(
    ("conditions", "message"),
    [
        ([1], "conditions must be a JSON object, not a array"),
        ({}, '"name"'),
        ({"name": ""}, '"name"'),
        ({"name": "m", "scale": {"x": 0.5}}, "/scale/x"),
    ],
)
def test_identity_rejects_bad_conditions(conditions: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _core.make_identity(conditions)


def test_identity_refuses_what_is_not_json() -> None:
    with pytest.raises(TypeError, match=r"conditions\.weights holds a set"):
        _core.make_identity({"name": "m", "weights": {"a"}})
    with pytest.raises(TypeError, match="conditions has a key that is not a string: 1"):
        _core.make_identity({"name": "m", 1: "x"})
    looped: dict[str, object] = {"name": "m"}
    looped["self"] = looped
    with pytest.raises(ValueError, match="nests deeper than 64 levels"):
        _core.make_identity(looped)


def test_identity_attributes_are_read_only() -> None:
    ident = identity()
    with pytest.raises(AttributeError):
        ident.digest = "0" * 64  # type: ignore[misc]


def test_store_creates_a_private_directory(tmp_path: Path) -> None:
    directory = tmp_path / "a" / "b"
    store = _core.Store(str(directory))
    assert store.directory == str(directory)
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(OSError, match="file"):
        _core.Store(str(tmp_path / "file" / "sub"))


@pytest.mark.parametrize(
    "make_plan",
    [
        bytes,
        bytearray,
        lambda data: memoryview(data),
        lambda data: np.frombuffer(data, dtype=np.uint8),
        lambda data: np.frombuffer(data, dtype=np.float32),
    ],
    ids=["bytes", "bytearray", "memoryview", "numpy-uint8", "numpy-float32"],
)
def test_save_and_read_round_trip(store: _core.Store, make_plan: object) -> None:
    data = os.urandom(40_000)
    ident = identity()
    assert not store.contains(ident)
    assert store.read(ident) is None
    path = store.save(ident, {"workspace_limit": None}, make_plan(data))  # type: ignore[operator]
    assert path == store.entry_path(ident) == os.path.join(store.directory, ident.file_name)
    assert store.contains(ident)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    saved = store.read(ident)
    assert saved is not None
    assert saved.path == path
    assert saved.conditions == ident.conditions
    assert saved.references == {"workspace_limit": None}
    plan = saved.plan
    assert isinstance(plan, memoryview)
    assert plan.readonly
    assert plan.nbytes == len(data)
    assert bytes(plan) == data
    assert sorted(os.listdir(store.directory)) == [ident.file_name]


def test_saved_file_matches_the_documented_format_byte_for_byte(store: _core.Store) -> None:
    # engine_files.py writes the format independently in Python, with the xxhash package's
    # XXH3-128 as the plan checksum: both writers must produce the same bytes.
    data = os.urandom(70_000)
    ident = identity()
    path = Path(store.save(ident, {"workspace_limit": 4096}, data))
    conditions = ident.conditions
    expected = engine_file_bytes(conditions, {"workspace_limit": 4096}, data)
    assert path.read_bytes() == expected


def test_save_rejects_bad_arguments(store: _core.Store) -> None:
    ident = identity()
    with pytest.raises(ValueError, match="references must be a JSON object, not a array"):
        store.save(ident, [], b"plan")
    with pytest.raises(ValueError, match="/ratio"):
        store.save(ident, {"ratio": 0.5}, b"plan")
    with pytest.raises(TypeError, match="bytes-like"):
        store.save(ident, {}, np.zeros((4, 4), dtype=np.uint8)[:, 1])
    with pytest.raises(TypeError):
        store.save(ident, {}, "text is not bytes")
    assert not store.contains(ident)


def test_plan_is_a_view_of_the_verified_copy_that_nothing_done_to_the_file_reaches(
    store: _core.Store,
) -> None:
    ident = identity()
    data = os.urandom(1 << 20)
    path = store.save(ident, {}, data)
    saved = store.read(ident)
    assert saved is not None
    address = np.frombuffer(saved.plan, dtype=np.uint8).ctypes.data
    # A view of one copy, not a copy per access, and of no mapping of the file.
    assert np.frombuffer(saved.plan, dtype=np.uint8).ctypes.data == address
    with open("/proc/self/maps") as maps:
        mapped = [line for line in maps if line.split()[5:6] == [path]]
    assert mapped == []
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, b"\xff" * 4096, os.path.getsize(path) - 4096)
        os.ftruncate(fd, 0)
    finally:
        os.close(fd)
    assert bytes(saved.plan) == data


def test_plan_keeps_its_copy_alive(store: _core.Store) -> None:
    ident = identity()
    data = os.urandom(10_000)
    store.save(ident, {}, data)
    saved = store.read(ident)
    assert saved is not None
    plan = saved.plan
    del saved
    gc.collect()
    store.save(ident, {}, b"replaced")  # the old file is replaced; the copy lives on
    assert bytes(plan) == data


def test_damaged_entries_raise_corrupt_engine_error(store: _core.Store) -> None:
    ident = identity()
    path = Path(store.save(ident, {}, b"x" * 1000))
    good = path.read_bytes()
    path.write_bytes(good[:-1] + b"y")
    with pytest.raises(CorruptEngineError, match="XXH3-128 checksum") as caught:
        store.read(ident)
    assert str(path) in str(caught.value)
    assert isinstance(caught.value, EngineCacheError)
    assert isinstance(caught.value, ValueError)
    path.write_bytes(good[:100])
    with pytest.raises(CorruptEngineError, match="truncated"):
        store.read(ident)
    path.write_bytes(b"")
    with pytest.raises(CorruptEngineError, match="empty file"):
        store.read(ident)
    path.write_bytes(b"TSRCLENG" + (9).to_bytes(4, "little") + good[12:])
    with pytest.raises(CorruptEngineError, match="newer tensoracle, format version 9"):
        store.read(ident)


def test_other_conditions_raise_engine_condition_error(store: _core.Store) -> None:
    wanted = identity()
    other = identity(graph_version="2")
    os.rename(store.save(other, {}, b"plan"), store.entry_path(wanted))
    with pytest.raises(EngineConditionError, match='"graph_version"') as caught:
        store.read(wanted)
    assert store.entry_path(wanted) in str(caught.value)


def test_a_directory_at_the_entry_name_is_a_corrupt_entry(store: _core.Store) -> None:
    # Not an OSError such as IsADirectoryError: what stands at the entry's name is not an engine.
    ident = identity()
    os.mkdir(store.entry_path(ident))
    with pytest.raises(CorruptEngineError, match=ident.file_name) as raised:
        store.read(ident)
    assert not isinstance(raised.value, OSError)


def test_successful_read_records_the_time(store: _core.Store) -> None:
    ident = identity()
    path = store.save(ident, {}, b"plan")
    os.utime(path, (1_000_000_000, 1_000_000_000))
    assert store.read(ident) is not None
    assert os.stat(path).st_mtime > time.time() - 60


def test_lock_is_a_context_manager(store: _core.Store) -> None:
    ident = identity()
    with store.lock(ident, exclusive=True) as lock:
        assert lock.held
        assert lock.exclusive
        assert lock.path == store.lock_path(ident) == store.entry_path(ident) + ".lock"
        assert store.try_lock(ident, exclusive=False) is None
    assert not lock.held
    shared = store.lock(ident, exclusive=False)
    assert not shared.exclusive
    other = store.try_lock(ident, exclusive=False)
    assert other is not None
    assert store.try_lock(ident, exclusive=True) is None
    shared.release()
    other.release()
    other.release()
    assert store.try_lock(ident, exclusive=True) is not None


def test_lock_entry_is_the_identity_lock_taken_by_file_name(store: _core.Store) -> None:
    ident = identity()
    with store.lock_entry(ident.file_name, exclusive=True) as lock:
        assert lock.held
        assert lock.exclusive
        assert lock.path == store.lock_path(ident)
        assert store.try_lock(ident, exclusive=False) is None
    assert store.try_lock(ident, exclusive=True) is not None
    with store.lock_entry(ident.file_name, exclusive=False) as shared:
        assert not shared.exclusive
        assert store.try_lock(ident, exclusive=True) is None


@pytest.mark.parametrize(
    "name",
    ["", "x.engin", ".engine", ".hidden.engine", "sub/x.engine", "../x.engine", "a\0.engine"],
)
def test_lock_entry_refuses_what_is_not_an_entry_file_name(store: _core.Store, name: str) -> None:
    with pytest.raises(ValueError, match="is not the file name of an engine entry") as raised:
        store.lock_entry(name, exclusive=True)
    assert f"file_name '{name.replace(chr(0), chr(92) + 'x00')}'" in str(raised.value)
    assert list(Path(store.directory).iterdir()) == []


HOLDER = textwrap.dedent(
    """
    import json, select, sys
    from tensoracle import _core
    store = _core.Store(sys.argv[1])
    lock = store.lock(_core.make_identity(json.loads(sys.argv[2])), exclusive=True)
    print("locked", flush=True)
    # Gives up after 10 s, so that a waiter that wrongly holds the GIL fails instead of hanging.
    select.select([sys.stdin], [], [], 10)
    """
)


def test_lock_waits_for_another_process_without_holding_the_gil(store: _core.Store) -> None:
    ident = identity()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, store.directory, json.dumps(ident.conditions)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        assert store.try_lock(ident, exclusive=False) is None
        acquired = threading.Event()

        def wait_for_lock() -> None:
            with store.lock(ident, exclusive=False):
                acquired.set()

        waiter = threading.Thread(target=wait_for_lock)
        waiter.start()
        ticks = 0
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:  # this thread runs: the waiter released the GIL
            ticks += 1
        assert not acquired.is_set()
        assert ticks > 1000
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    waiter.join(timeout=30)
    assert acquired.is_set()


OPENER = textwrap.dedent(
    """
    import hashlib, json, os, sys, time
    from tensoracle import _core
    directory, conditions, counter = sys.argv[1:4]
    store = _core.Store(directory)
    ident = _core.make_identity(json.loads(conditions))
    with store.lock(ident, exclusive=False):
        saved = store.read(ident)
    if saved is None:
        with store.lock(ident, exclusive=True):
            saved = store.read(ident)
            if saved is None:
                with open(counter, "a") as builds:
                    builds.write("build\\n")
                time.sleep(0.2)
                store.save(ident, {"builder": os.getpid()}, os.urandom(100_000))
                saved = store.read(ident)
    print(hashlib.sha256(saved.plan).hexdigest(), saved.references["builder"])
    """
)


def test_processes_following_the_open_protocol_build_once(
    store: _core.Store, tmp_path: Path
) -> None:
    ident = identity()
    counter = tmp_path / "builds"
    with store.lock(ident, exclusive=True):  # every opener starts blocked on its shared lock
        openers = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    OPENER,
                    store.directory,
                    json.dumps(ident.conditions),
                    counter,
                ],
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(4)
        ]
        time.sleep(0.5)
    outputs = [opener.communicate(timeout=60)[0] for opener in openers]
    assert all(opener.returncode == 0 for opener in openers)
    assert counter.read_text().count("build") == 1
    assert len(set(outputs)) == 1
    saved = store.read(ident)
    assert saved is not None
    assert outputs[0].split()[0] == hashlib.sha256(saved.plan).hexdigest()


def test_weight_digest_reuses_its_record(tmp_path: Path) -> None:
    weights = tmp_path / "model.safetensors"
    data = os.urandom(300_000)
    weights.write_bytes(data)
    cache = str(tmp_path / "cache")
    expected = hashlib.sha256(data).hexdigest()
    assert _core.weight_digest(cache, str(weights)) == (expected, False)
    assert _core.weight_digest(cache, str(weights)) == (expected, True)
    assert _core.weight_digest(cache, weights, force=True) == (expected, False)
    records = list(Path(cache).glob("weight-*.json"))
    assert [record.name for record in records] == [
        f"weight-{hashlib.sha256(str(weights).encode()).hexdigest()}.json"
    ]
    records[0].write_text("{damaged")
    assert _core.weight_digest(cache, str(weights)) == (expected, False)
    assert _core.weight_digest(cache, str(weights)) == (expected, True)
    weights.write_bytes(data + b"more")
    assert _core.weight_digest(cache, str(weights)) == (
        hashlib.sha256(data + b"more").hexdigest(),
        False,
    )
    with pytest.raises(OSError, match="absent"):
        _core.weight_digest(cache, str(tmp_path / "absent"))


def test_an_entry_saved_before_chunk_digests_existed_is_still_read(store: _core.Store) -> None:
    # Format 1 (no "chunks" in the header's plan): written by earlier versions, read as it is.
    data = os.urandom(70_000)
    ident = identity()
    conditions = ident.conditions
    old = engine_file_bytes(conditions, {"workspace_limit": 4096}, data, format_version=1)
    assert old[8:12] == (1).to_bytes(4, "little")
    Path(store.entry_path(ident)).write_bytes(old)
    saved = store.read(ident)
    assert saved is not None
    assert bytes(saved.plan) == data
    # A plan byte changed is refused by the plan checksum, as ever.
    Path(store.entry_path(ident)).write_bytes(old[:-1] + bytes([old[-1] ^ 1]))
    with pytest.raises(CorruptEngineError, match="XXH3-128"):
        store.read(ident)

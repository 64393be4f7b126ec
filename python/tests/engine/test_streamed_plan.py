"""A streamed deployed plan read from Python (``_core.open_deployed(..., stream_plan=True)``):
each read gives at most the rest of one 4 MiB chunk, checked, and reads from several threads
take turns on the one reader without mixing chunks."""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

import numpy as np
import pytest
import xxhash
from engine_files import canonical_json

import tensoracle
from tensoracle import _core
from tensoracle.engine.deployed import CheckedPlanReads

CHUNK = 4 << 20
DEVICE = {"name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"}
BACKEND, VERSION = "tensorrt_rtx", "1.7.1.116"


class Seek:
    """TensorRT's SeekPosition, as CheckedPlanReads compares it."""

    SET, CUR, END = 0, 1, 2


@pytest.fixture
def streamed(tmp_path: Path) -> tuple[object, bytes, Path]:
    """A saved entry of a 9 MiB + 77 byte plan, its manifest, opened streamed."""
    conditions = {"name": "streamed", "graph_version": "1", "backend": BACKEND,
                  "backend_version": VERSION, "gpu": None, "targets": ["sm89"]}  # fmt: skip
    plan = np.random.default_rng(3).integers(0, 256, (9 << 20) + 77, dtype=np.uint8).tobytes()
    store = _core.Store(str(tmp_path / "cache"))
    path = Path(store.save(_core.make_identity(conditions), {}, plan))
    data = path.read_bytes()
    entry = {
        "recipe": "streamed", "graph_version": "1", "file_name": path.name,
        "conditions": conditions, "backend": BACKEND, "backend_version": VERSION,
        "targets": ["sm89"], "hardware_compatibility": None, "io": None,
        "plan": {"size": len(plan), "xxh3_128": xxhash.xxh3_128(plan).hexdigest()},
        "engine_bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
        "header_sha256": hashlib.sha256(data[: len(data) - len(plan)]).hexdigest(),
        "fleet": None,
    }  # fmt: skip
    manifest = tmp_path / "deploy.json"
    manifest.write_text(json.dumps({"schema_version": 1, "spec": "tests:RECIPES",
                                    "remote": None, "entries": [entry]}))  # fmt: skip
    opened = _core.open_deployed(
        str(manifest), "streamed", DEVICE, BACKEND, VERSION, str(tmp_path / "cache"),
        None, None, False, True,
    )  # fmt: skip
    assert opened.streamed
    assert opened.plan is None
    return opened, plan, path


def test_a_read_gives_at_most_the_rest_of_one_checked_chunk(streamed):
    opened, plan, _path = streamed
    assert opened.read_plan(0, 8 << 20) == plan[:CHUNK]
    assert opened.read_plan(CHUNK - 10, 100) == plan[CHUNK - 10 : CHUNK]
    assert opened.read_plan(2 * CHUNK, 8 << 20) == plan[2 * CHUNK :]
    assert opened.read_plan(len(plan), 10) == b""
    into = bytearray(5 << 20)
    assert opened.read_plan_into(CHUNK, into) == len(into)
    assert bytes(into) == plan[CHUNK : CHUNK + len(into)]


def test_the_reads_tensorrt_makes_give_the_plan_and_stop_at_its_end(streamed):
    opened, plan, _path = streamed
    reads = CheckedPlanReads(opened, Seek)
    pieces = []
    while piece := reads.read(3 << 20, 0):
        assert len(piece) <= CHUNK
        pieces.append(piece)
    assert b"".join(pieces) == plan
    assert reads.seek(-5, Seek.END)
    assert reads.read(100, 0) == plan[-5:]
    assert not reads.seek(1, Seek.END)
    assert not reads.seek(-1, Seek.SET)
    assert reads.failure is None


def test_reads_from_several_threads_take_turns_and_each_gets_its_bytes(streamed):
    opened, plan, _path = streamed
    rng = np.random.default_rng(5)
    offsets = [int(o) for o in rng.integers(0, len(plan), 400)]
    wrong: list[int] = []

    def work(part: list[int]) -> None:
        for offset in part:
            if (
                opened.read_plan(offset, 70_000)
                != plan[offset : min(offset + 70_000, (offset // CHUNK + 1) * CHUNK)]
            ):
                wrong.append(offset)

    threads = [threading.Thread(target=work, args=(offsets[i::4],)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []


def test_a_chunk_changed_after_the_open_ends_the_stream_saying_why(streamed):
    opened, plan, path = streamed
    data = path.read_bytes()
    at = len(data) - len(plan) + CHUNK + 3  # in chunk 1
    with path.open("r+b") as file:
        file.seek(at)
        file.write(bytes([data[at] ^ 1]))
    reads = CheckedPlanReads(opened, Seek)
    assert reads.read(CHUNK, 0) == plan[:CHUNK]
    assert reads.read(CHUNK, 0) == b""
    assert isinstance(reads.failure, tensoracle.CorruptEngineError)
    assert f"chunk 1 (bytes {CHUNK} to {2 * CHUNK - 1} of the plan) has the XXH3-128 " in str(
        reads.failure
    )
    assert reads.read(10, 0) == b""


def test_a_consumer_that_stops_early_has_the_rest_checked_before_the_engine_is_used(streamed):
    # TensorRT's deserializer may stop before the plan's end: after it returns, the handle checks
    # what it did not read (check_rest), and a changed chunk there refuses the engine.
    opened, plan, path = streamed
    reads = CheckedPlanReads(opened, Seek)
    assert reads.read(CHUNK, 0) == plan[:CHUNK]  # chunk 0 only, then the consumer stops
    assert not opened.checked_whole
    data = path.read_bytes()
    at = len(data) - len(plan) + 2 * CHUNK + 9  # in chunk 2, never read
    with path.open("r+b") as file:
        file.seek(at)
        file.write(bytes([data[at] ^ 1]))
    with pytest.raises(tensoracle.CorruptEngineError, match=r"chunk 2 \(bytes "):
        opened.check_rest()
    assert not opened.checked_whole


def test_check_rest_reads_what_the_consumer_skipped_and_then_the_plan_is_checked_whole(streamed):
    opened, plan, _path = streamed
    reads = CheckedPlanReads(opened, Seek)
    assert reads.read(100, 0) == plan[:100]
    opened.check_rest()
    assert opened.checked_whole


def forged(path: Path, plan: bytes) -> tuple[bytes, bytes]:
    """The saved file's header listing the chunk digests of another plan of the same size, and
    that plan: each of its chunks passes the header's own list. (file bytes, other plan)"""
    other = bytearray(plan)
    other[10] ^= 1
    data = path.read_bytes()
    offset = len(data) - len(plan)
    header = json.loads(data[20:offset])
    chunks = [bytes(other[at : at + CHUNK]) for at in range(0, len(other), CHUNK)]
    header["plan"]["chunks"]["xxh3_128"] = [xxhash.xxh3_128(c).hexdigest() for c in chunks]
    header["plan"]["chunks"]["sha256"] = [hashlib.sha256(c).hexdigest() for c in chunks]
    text = canonical_json(header)
    assert len(text) == offset - 20  # the digests are the same lengths: the plan stays in place
    return data[:12] + len(text).to_bytes(8, "little") + text + bytes(other), bytes(other)


def test_without_a_key_a_forged_chunk_list_is_refused_by_the_open_before_any_chunk(
    streamed, tmp_path: Path
):
    opened, plan, path = streamed
    data, _other = forged(path, plan)
    path.write_bytes(data)
    with pytest.raises(tensoracle.CorruptEngineError) as refused:
        _core.open_deployed(
            str(tmp_path / "deploy.json"), "streamed", DEVICE, BACKEND, VERSION,
            str(tmp_path / "cache"), None, None, False, True,
        )  # fmt: skip
    assert "the manifest records header_sha256 " in str(refused.value)
    # The reader opened before the file was forged reads the file it verified: the forged plan's
    # changed chunk is refused by the verified header's digest.
    with pytest.raises(tensoracle.CorruptEngineError, match=r"chunk 0 \(bytes "):
        opened.read_plan(0, CHUNK)

"""Processes killed (SIGKILL) in the middle of work on an encrypted entry leave no plaintext of its
plan in any file: a streamed, decrypting open (``_core.open_deployed(..., stream_plan=True,
decrypt_key=...)``, read chunk by chunk) killed between two chunks writes nothing, and a
``tensoracle cache encrypt`` killed while it writes the sealed entry leaves at most a temporary
file of sealed bytes beside the plain entry it started from. ``cache decrypt`` writes the plan in
the clear by design: killed, its temporary file holds plaintext until a prune removes it. Each
plan is made of tagged records, so that any 4 KiB of it is found in a file of any size
(plaintext_scan)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from cache_cli import prune, run, tensoracle_executable
from engine_files import write_engine
from plaintext_scan import files_holding_tagged, tagged_plan, tagged_window_in
from x25519_keys import make_key

from tensoracle import _core

CHUNK = 4 << 20
DEVICE = {"name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"}
BACKEND, VERSION = "tensorrt_rtx", "1.7.1.116"
CONDITIONS = {"name": "big", "graph_version": "1", "backend": BACKEND, "backend_version": VERSION,
              "gpu": None, "targets": ["sm89"]}  # fmt: skip

# Opens the entry streamed with the key and reads it a chunk at a time, printing how far it has
# read after each chunk and waiting for a line on stdin before the next.
STREAMING_READER = """
import json, sys
from tensoracle import _core
manifest, cache, key, device = sys.argv[1:5]
opened = _core.open_deployed(manifest, "big", json.loads(device), "tensorrt_rtx", "1.7.1.116",
                             cache, None, stream_plan=True, decrypt_key=key)
offset = 0
while piece := opened.read_plan(offset, 4 << 20):
    offset += len(piece)
    print(offset, flush=True)
    sys.stdin.readline()
print("end", flush=True)
"""


def manifest_of(path: Path, manifest: Path) -> None:
    """A deployment manifest of the one saved entry at ``path`` (as `tensoracle build
    --manifest` writes one: the plan member describes the stored body)."""
    data = path.read_bytes()
    header = json.loads(data[20 : 20 + int.from_bytes(data[12:20], "little")])
    body = header["plan"]["size"]
    entry = {
        "recipe": "big", "graph_version": "1", "file_name": path.name, "conditions": CONDITIONS,
        "backend": BACKEND, "backend_version": VERSION, "targets": ["sm89"],
        "hardware_compatibility": None, "io": None,
        "plan": {"size": body, "xxh3_128": header["plan"]["xxh3_128"]},
        "engine_bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
        "header_sha256": hashlib.sha256(data[: len(data) - body]).hexdigest(), "fleet": None,
    }  # fmt: skip
    manifest.write_text(json.dumps({"schema_version": 1, "spec": "tests:RECIPES",
                                    "remote": None, "entries": [entry]}))  # fmt: skip


def test_a_streamed_decrypting_open_killed_between_chunks_wrote_no_plaintext(tmp_path: Path):
    plan = tagged_plan(6 * CHUNK + 1000, seed=1)
    key, public = make_key(tmp_path, "node")
    cache = tmp_path / "cache"
    store = _core.Store(str(cache))
    path = Path(store.save(_core.make_identity(CONDITIONS), {}, plan, encrypt_to=[str(public)]))
    sealed = path.read_bytes()
    manifest = tmp_path / "deploy.json"
    manifest_of(path, manifest)
    temporary = tmp_path / "tmp"
    temporary.mkdir()

    reader = subprocess.Popen(
        [sys.executable, "-c", STREAMING_READER, str(manifest), str(cache), str(key),
         json.dumps(DEVICE)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "TMPDIR": str(temporary)},
    )  # fmt: skip
    assert reader.stdin is not None
    assert reader.stdout is not None
    try:
        assert reader.stdout.readline().strip() == str(CHUNK)
        reader.stdin.write("\n")
        reader.stdin.flush()
        assert reader.stdout.readline().strip() == str(2 * CHUNK)  # the second chunk in hand
    finally:
        reader.send_signal(signal.SIGKILL)
        reader.communicate(timeout=60)
    assert reader.returncode == -signal.SIGKILL

    assert files_holding_tagged(plan, [tmp_path]) == {}
    assert path.read_bytes() == sealed
    # The search finds what is there: the plan itself, and the streamed open of it, whole.
    assert tagged_window_in(plan, plan[123_456 : 123_456 + 4096]) == 123_456
    opened = _core.open_deployed(str(manifest), "big", DEVICE, BACKEND, VERSION, str(cache), None,
                                 stream_plan=True, decrypt_key=str(key))  # fmt: skip
    pieces, offset = [], 0
    while piece := opened.read_plan(offset, CHUNK):
        pieces.append(piece)
        offset += len(piece)
    assert b"".join(pieces) == plan


def temporaries(cache: Path, name: str) -> list[Path]:
    return sorted(cache.glob(f"{name}.tmp-*"))


def test_a_cache_encrypt_killed_while_it_writes_leaves_no_plaintext_but_the_plain_entry(
    tmp_path: Path,
):
    plan = tagged_plan(96 << 20, seed=2)
    _key, public = make_key(tmp_path, "node")
    cache = tmp_path / "cache"
    cache.mkdir()
    path = write_engine(cache, CONDITIONS, plan=plan)
    plain = path.read_bytes()

    killed_while_writing(
        ["cache", "encrypt", path.name, "--to", str(public), "--cache-dir", str(cache)],
        cache,
        path.name,
    )

    # The plain entry it started from is untouched and the only file with plaintext in it.
    assert path.read_bytes() == plain
    assert files_holding_tagged(plan, [tmp_path]) == {str(path): 0}

    # Encrypted again, to the end: no file holds plaintext (what the killed one left is sealed).
    done = run("cache", "encrypt", path.name, "--to", str(public), "--cache-dir", str(cache))
    assert done.returncode == 0, done.stderr
    assert files_holding_tagged(plan, [tmp_path]) == {}


def killed_while_writing(arguments: list[str], cache: Path, name: str) -> list[Path]:
    """Runs the command, SIGKILLs it once its temporary file for the entry ``name`` has bytes,
    and returns the temporary files left."""
    process = subprocess.Popen(
        [tensoracle_executable(), *arguments], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while process.poll() is None and time.monotonic() < deadline:
        if any(temporary.stat().st_size > 0 for temporary in temporaries(cache, name)):
            break
        time.sleep(0.001)
    process.send_signal(signal.SIGKILL)
    _out, err = process.communicate(timeout=60)
    assert process.returncode == -signal.SIGKILL, err
    left = temporaries(cache, name)
    assert left, "the command ended before its temporary file was seen"
    return left


def test_a_killed_cache_decrypt_leaves_its_plaintext_temporary_to_the_next_prune(tmp_path: Path):
    """`cache decrypt` writes the plan in the clear by design: killed while it writes, its
    temporary file holds plaintext (and no other file does, the encrypted entry staying as it
    was); once abandoned, the next prune removes it."""
    plan = tagged_plan(96 << 20, seed=3)
    key, public = make_key(tmp_path, "node")
    cache = tmp_path / "cache"
    cache.mkdir()
    path = write_engine(cache, CONDITIONS, plan=plan)
    done = run("cache", "encrypt", path.name, "--to", str(public), "--cache-dir", str(cache))
    assert done.returncode == 0, done.stderr
    sealed = path.read_bytes()
    assert files_holding_tagged(plan, [tmp_path]) == {}

    left = killed_while_writing(
        ["cache", "decrypt", path.name, "--key", str(key), "--cache-dir", str(cache)],
        cache,
        path.name,
    )

    assert path.read_bytes() == sealed
    assert set(files_holding_tagged(plan, [tmp_path])) <= {str(temporary) for temporary in left}
    # Abandoned: its writer is gone and (set back) it is older than 10 minutes.
    old = time.time() - 3600
    for temporary in left:
        os.utime(temporary, (old, old))
    status, planned, result = prune(cache, "--unused-for", "36500")
    assert status == 0, (planned, result)
    assert temporaries(cache, path.name) == []
    assert files_holding_tagged(plan, [tmp_path]) == {}
    assert path.read_bytes() == sealed

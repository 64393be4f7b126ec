"""End-to-end tests of `tensoracle cache encrypt`, `cache decrypt` and `cache export
--decrypt-key` with keys made by `openssl genpkey -algorithm x25519`: the entry is sealed for its
recipients and stays a sound cache entry without a key, only a recipient's key gives its plan back,
and no file the commands write in the cache folder holds a plaintext chunk."""

from __future__ import annotations

from pathlib import Path

import pytest
from cache_cli import run
from engine_files import CHUNK_BYTES, write_engine
from x25519_keys import make_key

from tensoracle import EngineKeyError, _core

# Three chunks of bytes that occur nowhere else, so that a search for any 4 KiB of them in a file
# finds only a plaintext copy.
PLAN = bytes((i * 7919 + (i >> 8)) % 251 for i in range(2 * CHUNK_BYTES + 12345))


def _conditions() -> dict[str, object]:
    return {
        "name": "encoder",
        "graph_version": "3",
        "backend": "tensorrt_rtx",
        "backend_version": "1.7.1.116",
        "gpu": None,
        "targets": ["sm86", "sm89"],
    }


def holds_plaintext(data: bytes) -> bool:
    return any(PLAN[at : at + 4096] in data for at in range(0, len(PLAN) - 4096, CHUNK_BYTES // 2))


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    directory = tmp_path / "cache"
    directory.mkdir()
    return directory


def in_cache(cache: Path, command: str, *args: object):
    """``tensoracle cache COMMAND ARGS... --cache-dir CACHE``."""
    return run("cache", command, *(str(arg) for arg in args), "--cache-dir", str(cache))


def cache_files(cache: Path) -> list[Path]:
    return [path for path in cache.rglob("*") if path.is_file()]


def test_an_entry_encrypted_for_a_key_opens_only_with_it(cache: Path, tmp_path: Path):
    saved = write_engine(cache, _conditions(), plan=PLAN)
    alice_key, alice_pub = make_key(tmp_path, "alice")
    bob_key, _ = make_key(tmp_path, "bob")
    done = in_cache(cache, "encrypt", saved.name, "--to", alice_pub)
    assert done.returncode == 0, done.stderr
    assert "encrypted" in done.stdout
    assert not any(holds_plaintext(path.read_bytes()) for path in cache_files(cache))
    # Without a key it is a sound entry: the cache's own check reads the sealed body.
    verified = in_cache(cache, "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr

    output = tmp_path / "encoder.plan"
    refused = in_cache(cache, "export", saved.name, "--plan", output)
    assert refused.returncode == 1
    assert "is encrypted" in refused.stderr
    assert not output.exists()
    other = in_cache(cache, "export", saved.name, "--plan", output, "--decrypt-key", bob_key)
    assert other.returncode == 1
    assert "is not encrypted for" in other.stderr
    assert not output.exists()
    exported = in_cache(cache, "export", saved.name, "--plan", output, "--decrypt-key", alice_key)
    assert exported.returncode == 0, exported.stderr
    assert output.read_bytes() == PLAN

    plain = in_cache(cache, "decrypt", saved.name, "--key", alice_key)
    assert plain.returncode == 0, plain.stderr
    assert saved.read_bytes().endswith(PLAN)


def test_the_store_never_hands_out_a_sealed_body_as_a_plan(cache: Path, tmp_path: Path):
    saved = write_engine(cache, _conditions(), plan=PLAN)
    _, alice_pub = make_key(tmp_path, "alice")
    assert in_cache(cache, "encrypt", saved.name, "--to", alice_pub).returncode == 0
    store = _core.Store(str(cache))
    identity = _core.recorded_identity(_conditions())
    entry = store.read(identity)
    with pytest.raises(EngineKeyError, match="is encrypted"):
        entry.plan  # noqa: B018


def test_recipients_change_without_the_sealed_plan_changing(cache: Path, tmp_path: Path):
    saved = write_engine(cache, _conditions(), plan=PLAN)
    alice_key, alice_pub = make_key(tmp_path, "alice")
    bob_key, bob_pub = make_key(tmp_path, "bob")
    assert in_cache(cache, "encrypt", saved.name, "--to", alice_pub).returncode == 0
    body = saved.read_bytes()[-len(PLAN) :]
    without_key = in_cache(cache, "encrypt", saved.name, "--to", bob_pub)
    assert without_key.returncode == 1
    assert "encrypted already" in without_key.stderr
    added = in_cache(cache, "encrypt", saved.name, "--to", bob_pub, "--key", alice_key)
    assert added.returncode == 0, added.stderr
    assert saved.read_bytes()[-len(PLAN) :] == body
    output = tmp_path / "bob.plan"
    exported = in_cache(cache, "export", saved.name, "--plan", output, "--decrypt-key", bob_key)
    assert exported.returncode == 0, exported.stderr
    assert output.read_bytes() == PLAN

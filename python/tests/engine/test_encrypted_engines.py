"""open_engine and prepare_engine with ``encrypt_to`` and ``decrypt_key`` over the real store and
TensorRT-RTX builds: a build is saved sealed for its recipients and no file holds its plaintext,
the handle's plan is the build's plan, and a saved encrypted entry is opened with a recipient's
key into memory only; without a key, with another key, or with a key for a plain entry the open
is refused (EngineKeyError), and a saved entry is reused for ``encrypt_to`` only when it is sealed
for exactly those keys. Where a GPU is present open_engine also deserializes the plan, which
TensorRT-RTX refuses on GPUs outside its targets: those tests skip there, as test_engine's do."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from engine_files import header
from engine_helpers import DECLARATION, IO, make_graph, raising_graph, write_weights
from plaintext_scan import WINDOW, files_holding, window_in
from test_engine import open_example
from x25519_keys import key_id, make_key

from tensoracle import EngineKeyError, _core, prepare_engine

pytestmark = pytest.mark.backend


@pytest.fixture
def weights(tmp_path: Path) -> Path:
    return write_weights(tmp_path / "model.safetensors")


@pytest.fixture
def keys(tmp_path: Path) -> dict[str, tuple[Path, Path]]:
    folder = tmp_path / "keys"
    folder.mkdir()
    return {name: make_key(folder, name) for name in ("node", "other")}


def format_version(path: Path) -> int:
    return int.from_bytes(path.read_bytes()[8:12], "little")


def saved_entry(path: Path):
    """The verified saved entry at ``path``, read through the store as the protocol reads it."""
    conditions = header(path)["conditions"]
    entry = _core.Store(str(path.parent)).read(_core.recorded_identity(conditions))
    assert entry is not None
    return entry


def test_a_build_is_saved_sealed_and_the_handle_holds_the_plan(
    engine_cache: Path, weights: Path, keys, tmp_path: Path
):
    node_key, node_pub = keys["node"]
    calls: list[int] = []
    built = open_example(weights, make_graph(weights, calls), encrypt_to=[node_pub])
    assert (built.built, calls) == (True, [1])
    plan = bytes(built.plan)  # the build's own plan, never read back from the file
    assert len(plan) > 4 * WINDOW

    assert format_version(built.path) == 3
    sealing = header(built.path)["encryption"]
    assert sealing["plan_size"] == len(plan)
    assert [recipient["key"] for recipient in sealing["recipients"]] == [key_id(node_pub)]
    # Nothing written anywhere under the test's folders holds 4 KiB of the plan.
    assert files_holding(plan, [tmp_path]) == {}
    entry = saved_entry(built.path)
    assert entry.encrypted
    assert entry.opened_plan(decrypt_key=str(node_key)) == plan

    # Reopened with the key (the graph is not called): the plan decrypted in memory.
    opened = open_example(weights, decrypt_key=node_key, encrypt_to=[node_pub])
    assert opened.built is False
    assert bytes(opened.plan) == plan
    as_text = open_example(weights, decrypt_key=node_key.read_text())
    assert bytes(as_text.plan) == plan
    assert files_holding(plan, [tmp_path]) == {}


def test_an_encrypted_entry_is_refused_without_its_key(engine_cache: Path, weights: Path, keys):
    _node_key, node_pub = keys["node"]
    other_key, _other_pub = keys["other"]
    prepared = prepare_engine(
        make_graph(weights), DECLARATION, name="example", graph_version="1", weights=[weights],
        io=IO, encrypt_to=[node_pub],
    )  # fmt: skip
    assert prepared.built
    saved = prepared.path.read_bytes()
    with pytest.raises(EngineKeyError, match=r"is encrypted \(for [0-9a-f]{16}…\): pass"):
        open_example(weights)
    with pytest.raises(EngineKeyError, match="is not encrypted for"):
        open_example(weights, decrypt_key=other_key)
    # prepare_engine reuses it without a key: its plan is not read.
    again = prepare_engine(
        raising_graph, DECLARATION, name="example", graph_version="1", weights=[weights],
        io=IO, encrypt_to=[node_pub],
    )  # fmt: skip
    assert (again.built, again.path) == (False, prepared.path)
    assert prepared.path.read_bytes() == saved


def test_a_key_set_for_a_plain_entry_is_a_downgrade(engine_cache: Path, weights: Path, keys):
    node_key, _node_pub = keys["node"]
    plain = prepare_engine(
        make_graph(weights), DECLARATION, name="example", graph_version="1", weights=[weights],
        io=IO,
    )  # fmt: skip
    with pytest.raises(EngineKeyError, match="is not encrypted, but a decrypt key is set"):
        open_example(weights, decrypt_key=node_key)
    assert format_version(plain.path) == 2


def test_a_key_without_encrypt_to_never_saves_a_plain_build(
    engine_cache: Path, weights: Path, keys
):
    node_key, _node_pub = keys["node"]
    calls: list[int] = []
    with pytest.raises(EngineKeyError, match="pass encrypt_to"):
        open_example(weights, make_graph(weights, calls), decrypt_key=node_key)
    assert calls == []
    assert list(engine_cache.glob("*.engine")) == []


def test_an_entry_sealed_for_other_keys_or_plain_is_built_again_for_encrypt_to(
    engine_cache: Path, weights: Path, keys, caplog: pytest.LogCaptureFixture
):
    node_key, node_pub = keys["node"]
    other_key, other_pub = keys["other"]
    arguments = {"name": "example", "graph_version": "1", "weights": [weights], "io": IO}
    calls: list[int] = []
    plain = prepare_engine(make_graph(weights, calls), DECLARATION, **arguments)
    with caplog.at_level("WARNING", logger="tensoracle.cache"):
        sealed = prepare_engine(
            make_graph(weights, calls), DECLARATION, **arguments, encrypt_to=[node_pub]
        )
    assert (sealed.built, sealed.path, calls) == (True, plain.path, [1, 1])
    assert "is not sealed for encrypt_to (it is not encrypted)" in caplog.text
    assert saved_entry(sealed.path).recipients == [key_id(node_pub)]

    both = prepare_engine(
        make_graph(weights, calls), DECLARATION, **arguments, encrypt_to=[other_pub, node_pub]
    )
    assert (both.built, calls) == (True, [1, 1, 1])
    assert f"it is encrypted for {key_id(node_pub)[:16]}…, not for" in caplog.text
    entry = saved_entry(both.path)
    assert sorted(entry.recipients) == sorted([key_id(node_pub), key_id(other_pub)])
    assert entry.opened_plan(decrypt_key=str(other_key)) == entry.opened_plan(
        decrypt_key=str(node_key)
    )
    # The same keys, in another order or named twice: reused.
    same = prepare_engine(
        raising_graph, DECLARATION, **arguments, encrypt_to=[node_pub, other_pub, node_pub]
    )
    assert same.built is False


@pytest.mark.parametrize(
    ("encrypt_to", "error", "message"),
    [
        ("node.pub", ValueError, "encrypt_to must be a sequence"),
        ([b"node.pub"], ValueError, "which is not a key file's path or PEM text"),
        (["missing.pub"], OSError, "missing.pub"),
        (["model.safetensors"], ValueError, "model.safetensors"),
    ],
)
def test_encrypt_to_is_checked_before_anything_is_built(
    engine_cache: Path, weights: Path, tmp_path: Path, monkeypatch, encrypt_to, error, message
):
    monkeypatch.chdir(tmp_path)
    calls: list[int] = []
    with pytest.raises(error, match=message):
        prepare_engine(
            make_graph(weights, calls), DECLARATION, name="example", graph_version="1",
            weights=[weights], io=IO, encrypt_to=encrypt_to,
        )  # fmt: skip
    assert calls == []
    assert not engine_cache.exists() or list(engine_cache.glob("*.engine")) == []


def test_the_scan_finds_a_window_at_any_offset_and_nothing_else():
    plan = np.random.default_rng(7).integers(0, 256, 100_000, dtype=np.uint8).tobytes()
    assert window_in(plan, b"x" * 10 + plan[777 : 777 + WINDOW] + b"y") == 777
    assert window_in(plan, plan[5000 : 5000 + WINDOW - 1]) is None
    changed = bytearray(plan)
    for at in range(2000, len(plan), WINDOW - 1):
        changed[at] ^= 1
    assert window_in(plan, bytes(changed)) is None
    assert window_in(plan, bytes(changed) + plan[3001 : 3001 + WINDOW]) == 3001

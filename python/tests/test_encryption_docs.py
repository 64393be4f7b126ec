"""docs/encryption.md: its shell blocks (the ```bash ones: making a node's X25519 key pair and
printing its key id) run as written, and the key id they print is the SHA-256 of the raw 32-byte
public key, as the page defines it; its python block (``open_engine`` with ``encrypt_to`` and
``decrypt_key``) builds a real TensorRT-RTX engine saved encrypted and opens it again with the
key."""

from __future__ import annotations

import hashlib
import json
import re
import stat
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from docs_examples import REPO, python_blocks

import tensoracle

PAGE = REPO / "docs" / "encryption.md"


def bash_blocks() -> list[str]:
    return re.findall(r"^```bash\n(.*?)^```", PAGE.read_text(encoding="utf-8"), re.S | re.M)


def test_the_key_commands_of_the_encryption_guide_make_a_key_pair_and_print_its_key_id(
    tmp_path: Path,
):
    make_keys, print_key_id = bash_blocks()[:2]  # the third, a build, runs in test_encrypted_build
    made = subprocess.run(
        ["bash", "-e", "-c", make_keys],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    assert stat.S_IMODE((tmp_path / "node.key").stat().st_mode) == 0o600

    private = serialization.load_pem_private_key((tmp_path / "node.key").read_bytes(), None)
    public = serialization.load_pem_public_key((tmp_path / "node.pub").read_bytes())
    assert isinstance(private, X25519PrivateKey)
    assert isinstance(public, X25519PublicKey)
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    assert raw == private.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )

    printed = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", print_key_id],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.split()[0] == hashlib.sha256(raw).hexdigest()


@pytest.mark.backend
def test_the_open_engine_example_builds_encrypted_and_opens_with_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # Imported here: the key commands' test above needs no TensorRT backend.
    from engine_helpers import (
        DECLARATION,
        IO,
        make_graph,
        skip_where_the_gpu_is_refused,
        write_weights,
    )

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    make_keys = bash_blocks()[0]
    subprocess.run(["bash", "-e", "-c", make_keys], cwd=tmp_path, check=True, timeout=60)
    weights = write_weights(tmp_path / "encoder.safetensors")
    scope = {"graph": make_graph(weights), "declaration": DECLARATION, "io": IO}
    [block] = python_blocks("docs/encryption.md")
    try:
        exec(compile(block, "docs/encryption.md (python block 1)", "exec"), scope)
    except tensoracle.EngineTargetError:
        skip_where_the_gpu_is_refused()  # TensorRT-RTX cannot target this GPU
        raise
    built = scope["built"]
    data = built.path.read_bytes()
    assert int.from_bytes(data[8:12], "little") == 3
    public = serialization.load_pem_public_key((tmp_path / "node.pub").read_bytes())
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    header = json.loads(data[20 : 20 + int.from_bytes(data[12:20], "little")])
    recipients = header["encryption"]["recipients"]
    assert [recipient["key"] for recipient in recipients] == [hashlib.sha256(raw).hexdigest()]
    if tensoracle.gpu.absent_reason() is not None:  # not deserialized: the plans are in hand
        assert bytes(scope["reopened"].plan) == bytes(built.plan)
        assert header["encryption"]["plan_size"] == len(bytes(built.plan))

"""docs/encryption.md: its shell blocks (the ```bash ones: making a node's X25519 key pair and
printing its key id) run as written, and the key id they print is the SHA-256 of the raw 32-byte
public key, as the page defines it."""

from __future__ import annotations

import hashlib
import re
import stat
import subprocess
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from docs_examples import REPO

PAGE = REPO / "docs" / "encryption.md"


def bash_blocks() -> list[str]:
    return re.findall(r"^```bash\n(.*?)^```", PAGE.read_text(encoding="utf-8"), re.S | re.M)


def test_the_key_commands_of_the_encryption_guide_make_a_key_pair_and_print_its_key_id(
    tmp_path: Path,
):
    make_keys, print_key_id = bash_blocks()
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

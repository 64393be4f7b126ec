"""X25519 key pairs for encrypted engines, made with the commands docs/encryption.md gives users,
and their key ids computed independently of tensoracle (the cryptography package)."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from cryptography.hazmat.primitives import serialization


def make_key(folder: Path, name: str) -> tuple[Path, Path]:
    """(private key, public key) PEM files ``folder/NAME.key`` and ``folder/NAME.pub``."""
    private, public = folder / f"{name}.key", folder / f"{name}.pub"
    subprocess.run(["openssl", "genpkey", "-algorithm", "x25519", "-out", str(private)], check=True)
    subprocess.run(
        ["openssl", "pkey", "-in", str(private), "-pubout", "-out", str(public)], check=True
    )
    return private, public


def key_id(public: Path) -> str:
    """The key id of a public key file: the SHA-256 of its raw 32 bytes, in hex."""
    key = serialization.load_pem_public_key(public.read_bytes())
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()

"""Encrypted entries in the open protocol (``tensoracle.cache.protocol``; docs/encryption.md).

``encrypt_to`` (``prepare_engine``, ``open_engine``, ``tensoracle build --encrypt-to``) names the
X25519 public keys a built plan is sealed for: the store seals it chunk by chunk as it writes
(``Store.save(..., encrypt_to=...)``), so the plaintext plan is never written. A saved or fetched
entry is reused for such a call only when it is sealed for exactly those keys; any other (a plain
entry, or one sealed for other recipients) is built anew and replaced.

``decrypt_key`` (``open_engine``) opens a saved entry that is encrypted: its plan is decrypted
into this process's memory (``SavedEngine.opened_plan``), each chunk authenticated. Without a key
an encrypted entry is refused when its plan is needed, and with one a plain entry is refused as a
downgrade (as ``open_deployed`` refuses it), both with EngineKeyError.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tensoracle import _core
from tensoracle.engine.field_checks import check_text
from tensoracle.errors import EngineKeyError

KeyArgument = str | os.PathLike[str]


@dataclass(frozen=True)
class Sealing:
    """The recipients a built plan is sealed for: each key as ``Store.save`` takes it (a PEM
    file's path or a PEM text), and their key ids."""

    keys: tuple[str, ...]
    ids: frozenset[str]

    def mismatch(self, saved: Any) -> str | None:
        """Why the saved entry is not sealed for exactly these recipients, or None."""
        if not saved.encrypted:
            return "it is not encrypted"
        found = frozenset(saved.recipients)
        if found == self.ids:
            return None
        return f"it is encrypted for {_shown(found)}, not for {_shown(self.ids)}"


def _shown(ids: frozenset[str]) -> str:
    return ", ".join(f"{key_id[:16]}…" for key_id in sorted(ids))


def _is_pem(key: object) -> bool:
    return isinstance(key, str) and key.startswith("-----BEGIN")


def sealing(encrypt_to: Any) -> Sealing | None:
    """The checked ``encrypt_to`` (a sequence of public keys: PEM file paths or PEM texts), None
    when empty. Each key is read now, before anything is built: OSError when a file cannot be
    read, ValueError when an argument is no X25519 public key."""
    if isinstance(encrypt_to, str | bytes | os.PathLike) or not isinstance(encrypt_to, Sequence):
        raise ValueError(
            "encrypt_to must be a sequence of X25519 public keys (PEM file paths or PEM texts), "
            f"not {encrypt_to!r}"
        )
    keys: list[str] = []
    for key in encrypt_to:
        if not isinstance(key, str | os.PathLike) or not os.fspath(key):
            raise ValueError(
                f"encrypt_to holds {key!r}, which is not a key file's path or PEM text"
            )
        text = os.fsdecode(os.fspath(key))
        if not _is_pem(text):
            check_text("encrypt_to path", text)
        keys.append(text)
    if not keys:
        return None
    ids = frozenset(_core.recipient_key_id(key) for key in keys)
    return Sealing(tuple(keys), ids)


def check_decrypt_key(decrypt_key: object) -> KeyArgument | None:
    """``decrypt_key`` checked: None, a PEM file's path, or a PEM text."""
    if decrypt_key is None:
        return None
    if isinstance(decrypt_key, str | os.PathLike) and os.fspath(decrypt_key):
        return decrypt_key
    raise ValueError(
        "decrypt_key must be an X25519 private key: the path of its PEM file or its PEM text, "
        f"not {decrypt_key!r}"
    )


def decrypt_key_arguments(key: KeyArgument | None) -> tuple[str | None, str | None]:
    """(key file, key text) for the bindings' ``decrypt_key``/``decrypt_key_pem``: text starting
    with ``-----BEGIN`` is a key's PEM text, anything else the path of its file."""
    if key is None:
        return None, None
    if _is_pem(key):
        return None, str(key)
    return os.fspath(key), None


def plan_of(saved: Any, decrypt_key: KeyArgument | None, needed: bool) -> Any:
    """The plan of the verified saved entry ``saved`` (a ``_core.SavedEngine``): a view of it for
    a plain entry, the decrypted bytes for an encrypted one opened with ``decrypt_key``, None for
    an encrypted one whose plan is not ``needed`` (``prepare_engine``). EngineKeyError (the
    core's judgement, ``SavedEngine.plan_for``) when an encrypted entry's plan is needed without
    a key, when the key is none of its recipients, and when a key is given for a plain entry."""
    if saved.encrypted and decrypt_key is None and not needed:
        return None
    return saved.plan_for(*decrypt_key_arguments(decrypt_key))


def refuse_plain_build(name: str, decrypt_key: KeyArgument | None, sealed: Sealing | None) -> None:
    """EngineKeyError when a build with ``decrypt_key`` set would save a plain entry: the next
    open with that key would refuse it as a downgrade."""
    if decrypt_key is not None and sealed is None:
        raise EngineKeyError(
            f"open_engine({name!r}, decrypt_key=...) found no saved entry it may open and would "
            "build one and save it unencrypted; pass encrypt_to=[public key, ...] to save the "
            "build encrypted"
        )

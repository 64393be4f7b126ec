"""Seeds of fuzz_encrypted_engine: encrypted engine files (format 3) and the near misses an open
must refuse, written into the folder given.

The files are sealed as docs/encryption.md and cpp/src/encryption/ describe the format, with
cryptography's X25519, HKDF-SHA256 and AES-256-GCM, for the fuzz target's fixed key: the X25519
private key whose 32 bytes are SHA-256("tensoracle fuzz recipient v1"). Every key, ephemeral key
and data key here is derived from a label the same way, so the seeds are the same on every run.
A valid file opens with the fixed key; each variant is refused at its own step: the header
(cipher, plan sizes, version, recipients' order), the key's unwrapping (another recipient only,
a changed wrapped key, a small-order ephemeral key, a commitment to another data key) or a
chunk's authentication (a changed, swapped, dropped or cut chunk, with the header's digests
written for the changed body, so that only the cipher can tell).

    python cpp/fuzz/encrypted_engine_seeds.py FOLDER    (needs xxhash and cryptography)
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys
from pathlib import Path
from typing import Any

import xxhash
from cryptography.hazmat.primitives.asymmetric.x25519 import (
    X25519PrivateKey,
    X25519PublicKey,
)
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

CHUNK = 4 << 20
TAG = 16
PIECE = CHUNK - TAG
PIECE_AAD = b"tensoracle plan chunk v1"
WRAP_INFO = b"tensoracle engine key v1"
COMMITMENT_PREFIX = b"tensoracle data key v1\n"
CONDITIONS = {"name": "m", "graph_version": "1"}


def derived(label: str) -> bytes:
    return hashlib.sha256(label.encode()).digest()


def private_key(label: str) -> X25519PrivateKey:
    return X25519PrivateKey.from_private_bytes(derived(label))


FIXED = private_key("tensoracle fuzz recipient v1")
OTHER = private_key("tensoracle fuzz other recipient v1")


def public_raw(key: X25519PrivateKey) -> bytes:
    return key.public_key().public_bytes_raw()


def canonical(value: Any) -> bytes:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode()


def nonce(index: int, last: bool) -> bytes:
    return struct.pack(">QB3x", index, last)


def seal(data_key: bytes, plan: bytes) -> list[bytes]:
    """The plan's sealed pieces: each one chunk of the body (an empty plan is one empty piece)."""
    pieces = [plan[at : at + PIECE] for at in range(0, len(plan), PIECE)] or [b""]
    aead = AESGCM(data_key)
    last = len(pieces) - 1
    return [
        aead.encrypt(nonce(i, i == last), piece, PIECE_AAD)
        for i, piece in enumerate(pieces)
    ]


def wrapped_for(data_key: bytes, recipient: bytes, label: str) -> dict[str, str]:
    """`data_key` wrapped for the raw public key `recipient`, with the ephemeral key of `label`."""
    ephemeral = private_key(label)
    shared = ephemeral.exchange(X25519PublicKey.from_public_bytes(recipient))
    salt = public_raw(ephemeral) + recipient
    kek = HKDF(algorithm=SHA256(), length=32, salt=salt, info=WRAP_INFO).derive(shared)
    return {
        "ephemeral": public_raw(ephemeral).hex(),
        "key": hashlib.sha256(recipient).hexdigest(),
        "wrapped_key": AESGCM(kek).encrypt(bytes(12), data_key, None).hex(),
    }


def encryption_member(
    data_key: bytes, plan_size: int, recipients: list[X25519PrivateKey]
) -> dict[str, Any]:
    wrapped = [
        wrapped_for(data_key, public_raw(key), f"ephemeral {index}")
        for index, key in enumerate(recipients)
    ]
    return {
        "cipher": "aes-256-gcm",
        "key_commitment": hashlib.sha256(COMMITMENT_PREFIX + data_key).hexdigest(),
        "plan_size": plan_size,
        "recipients": sorted(wrapped, key=lambda item: item["key"]),
    }


def engine(body: bytes, encryption: dict[str, Any] | None, version: int = 3) -> bytes:
    """An engine file of `body` whose "plan" member describes the body as stored."""
    chunks = [body[at : at + CHUNK] for at in range(0, len(body), CHUNK)]
    header: dict[str, Any] = {
        "conditions": CONDITIONS,
        "plan": {
            "size": len(body),
            "xxh3_128": xxhash.xxh3_128_hexdigest(body),
            "chunks": {
                "sha256": [hashlib.sha256(chunk).hexdigest() for chunk in chunks],
                "xxh3_128": [xxhash.xxh3_128_hexdigest(chunk) for chunk in chunks],
            },
        },
        "references": {},
    }
    if encryption is not None:
        header["encryption"] = encryption
    text = canonical(header)
    return b"TSRCLENG" + struct.pack("<IQ", version, len(text)) + text + body


def wrapping_plan_size(body_size: int) -> int:
    """The plan size below 2^64 whose sealed size, plan + a tag per piece counted in 64 bits,
    wraps around to `body_size`."""
    estimate = ((1 << 64) + body_size) * PIECE // CHUNK
    for size in range(estimate - 64, min(estimate + 64, 1 << 64)):
        pieces = -(-size // PIECE)
        if (size + TAG * pieces) % (1 << 64) == body_size:
            return size
    raise ValueError(f"no plan size wraps around to {body_size}")


def flipped(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :]


def seeds() -> dict[str, bytes]:
    data_key = derived("tensoracle fuzz data key v1")
    small = bytes(range(100))
    two = bytes(i % 251 for i in range(PIECE + 1000))  # two chunks, the last short
    full = bytes(i % 241 for i in range(2 * PIECE))  # two full chunks

    def sealed(plan: bytes, **changes: Any) -> dict[str, Any]:
        member = encryption_member(data_key, len(plan), [FIXED])
        member.update(changes)
        return member

    body_small = b"".join(seal(data_key, small))
    pieces_two = seal(data_key, two)
    pieces_full = seal(data_key, full)
    other_wrap = encryption_member(data_key, len(small), [OTHER])
    both = encryption_member(data_key, len(small), [FIXED, OTHER])
    fixed_id = hashlib.sha256(public_raw(FIXED)).hexdigest()
    fixed_at = [item["key"] for item in both["recipients"]].index(fixed_id)

    def changed_recipient(**changes: str) -> dict[str, Any]:
        member = json.loads(json.dumps(both))
        member["recipients"][fixed_at].update(changes)
        return member

    wrapped = bytes.fromhex(both["recipients"][fixed_at]["wrapped_key"])
    another_key = derived("tensoracle fuzz another data key v1")
    # A copy wrapped for the fixed key that authenticates, of a key the header does not commit to.
    uncommitted = encryption_member(another_key, len(small), [FIXED, OTHER])
    uncommitted["key_commitment"] = both["key_commitment"]
    return {
        "valid_small": engine(body_small, sealed(small)),
        "valid_empty": engine(b"".join(seal(data_key, b"")), sealed(b"")),
        "valid_two_chunks": engine(b"".join(pieces_two), sealed(two)),
        "valid_two_full_chunks": engine(b"".join(pieces_full), sealed(full)),
        "valid_two_recipients": engine(body_small, both),
        "plain_format_2": engine(small, None, version=2),
        "changed_chunk": engine(flipped(body_small, 10), sealed(small)),
        "changed_tag": engine(flipped(body_small, len(body_small) - 1), sealed(small)),
        "changed_second_chunk": engine(
            pieces_two[0] + flipped(pieces_two[1], 3), sealed(two)
        ),
        "swapped_chunks": engine(pieces_full[1] + pieces_full[0], sealed(full)),
        # The last chunk dropped, the header written for what is left: chunk 0 was not sealed last.
        "last_chunk_dropped": engine(pieces_two[0], sealed(two, plan_size=PIECE)),
        # One byte cut from the last chunk, the sizes written for it: the tag is not where it was.
        "cut_short": engine(body_small[:-1], sealed(small, plan_size=len(small) - 1)),
        "truncated_file": engine(body_small, sealed(small))[:-7],
        "plan_size_changed": engine(
            body_small, sealed(small, plan_size=len(small) + 1)
        ),
        # A plan size near 2^64 whose sealed size wraps around to the 17 bytes of the body.
        "plan_size_wraps": engine(
            bytes(17), sealed(small, plan_size=wrapping_plan_size(17))
        ),
        "another_recipient_only": engine(body_small, other_wrap),
        "changed_wrapped_key": engine(
            body_small, changed_recipient(wrapped_key=flipped(wrapped, 0).hex())
        ),
        "changed_ephemeral": engine(
            body_small,
            changed_recipient(
                ephemeral=flipped(
                    bytes.fromhex(both["recipients"][fixed_at]["ephemeral"]), 5
                ).hex()
            ),
        ),
        "small_order_ephemeral": engine(
            body_small, changed_recipient(ephemeral="00" * 32)
        ),
        "commitment_to_another_key": engine(body_small, uncommitted),
        "changed_commitment": engine(
            body_small, sealed(small, key_commitment=hashlib.sha256(b"x").hexdigest())
        ),
        "changed_cipher": engine(body_small, sealed(small, cipher="chacha20-poly1305")),
        "recipients_unsorted": engine(
            body_small, dict(both, recipients=list(reversed(both["recipients"])))
        ),
        "recipients_none": engine(body_small, sealed(small, recipients=[])),
        "version_2_with_encryption": engine(body_small, sealed(small), version=2),
        "version_3_without_encryption": engine(small, None, version=3),
    }


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} FOLDER")
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in seeds().items():
        (folder / name).write_bytes(data)


if __name__ == "__main__":
    main()

"""Benchmark: the authenticated ciphers an encrypted engine file could use, against SHA-256.

Every candidate works on the same random bytes held in memory (1 GiB by default), in the pieces
an engine file's body is cut into: 4 MiB chunks, each sealed on its own so that the sealed piece
fills exactly one 4 MiB chunk (the plaintext piece is 4 MiB less the cipher's tag). Timed, one
thread each, best of the interleaved rounds:

- SHA-256 of every 4 MiB chunk (hashlib, OpenSSL underneath): the baseline, the digest the
  header records for every chunk and that every open already checks;
- AES-256-GCM sealing and opening of every piece (cryptography's AESGCM, OpenSSL's EVP
  underneath), nonce = the piece's index (u64 big-endian), one byte set on the last piece, three
  zero bytes, and the engine chunk AAD: the format's cipher;
- XChaCha20-Poly1305 as libsodium's secretstream (PyNaCl's bindings), pushed and pulled piece by
  piece, TAG_FINAL on the last;
- ChaCha20-Poly1305 (the IETF AEAD, cryptography), sealed and opened per piece with the same
  nonces as AES-256-GCM.

Prints each one's time, its throughput in GB/s (10^9 bytes) and its time as a ratio to SHA-256's.
Every sealing is opened once before the timing and must give the plaintext back.

    python bench/cipher_choice.py [--mib N] [--repeats R] [--quick]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import struct
from collections.abc import Callable

import harness
import nacl
import nacl.bindings as sodium
from cryptography.hazmat.backends.openssl.backend import backend as openssl
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

CHUNK = 4 << 20
GCM_TAG = 16
AAD = b"tensoracle plan chunk v1"
STREAM_TAG = sodium.crypto_secretstream_xchacha20poly1305_ABYTES
FINAL = sodium.crypto_secretstream_xchacha20poly1305_TAG_FINAL
MESSAGE = sodium.crypto_secretstream_xchacha20poly1305_TAG_MESSAGE


def pieces(data: bytes, size: int) -> list[bytes]:
    """``data`` cut into pieces of ``size`` bytes, the last one shorter."""
    return [data[offset : offset + size] for offset in range(0, len(data), size)]


def nonce(index: int, last: bool) -> bytes:
    """The 12-byte nonce of piece ``index``: u64 big-endian, the last-piece byte, 3 zero bytes."""
    return struct.pack(">QB3x", index, last)


def digest_all(chunks: list[bytes]) -> list[bytes]:
    return [hashlib.sha256(chunk).digest() for chunk in chunks]


def seal_all(aead: AESGCM | ChaCha20Poly1305, plain: list[bytes]) -> list[bytes]:
    last = len(plain) - 1
    return [
        aead.encrypt(nonce(index, index == last), piece, AAD)
        for index, piece in enumerate(plain)
    ]


def open_all(aead: AESGCM | ChaCha20Poly1305, sealed: list[bytes]) -> list[bytes]:
    last = len(sealed) - 1
    return [
        aead.decrypt(nonce(index, index == last), chunk, AAD)
        for index, chunk in enumerate(sealed)
    ]


def push_all(key: bytes, plain: list[bytes]) -> tuple[bytes, list[bytes]]:
    """The secretstream's header and every piece pushed, TAG_FINAL on the last."""
    state = sodium.crypto_secretstream_xchacha20poly1305_state()
    header = sodium.crypto_secretstream_xchacha20poly1305_init_push(state, key)
    last = len(plain) - 1
    sealed = [
        sodium.crypto_secretstream_xchacha20poly1305_push(
            state, piece, None, FINAL if index == last else MESSAGE
        )
        for index, piece in enumerate(plain)
    ]
    return header, sealed


def pull_all(key: bytes, header: bytes, sealed: list[bytes]) -> list[bytes]:
    state = sodium.crypto_secretstream_xchacha20poly1305_state()
    sodium.crypto_secretstream_xchacha20poly1305_init_pull(state, header, key)
    opened = []
    last = len(sealed) - 1
    for index, chunk in enumerate(sealed):
        piece, tag = sodium.crypto_secretstream_xchacha20poly1305_pull(
            state, chunk, None
        )
        if tag != (FINAL if index == last else MESSAGE):
            raise AssertionError(f"secretstream piece {index} has tag {tag}")
        opened.append(piece)
    return opened


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--mib", type=int, default=1024, help="bytes to process in MiB (default 1024)"
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=5,
        help="best of N interleaved rounds (default 5)",
    )
    args = harness.parse(parser, {"mib": 64, "repeats": 1})
    size = args.mib << 20
    data = os.urandom(size)
    chunks = pieces(data, CHUNK)
    gcm_plain = pieces(data, CHUNK - GCM_TAG)
    stream_plain = pieces(data, CHUNK - STREAM_TAG)

    aes = AESGCM(AESGCM.generate_key(bit_length=256))
    chacha = ChaCha20Poly1305(ChaCha20Poly1305.generate_key())
    stream_key = sodium.crypto_secretstream_xchacha20poly1305_keygen()

    # The sealed pieces the openings read, each checked once before anything is timed.
    aes_sealed = seal_all(aes, gcm_plain)
    chacha_sealed = seal_all(chacha, gcm_plain)
    stream_header, stream_sealed = push_all(stream_key, stream_plain)
    for name, sealed, opened in [
        ("AES-256-GCM", aes_sealed, open_all(aes, aes_sealed)),
        ("ChaCha20-Poly1305", chacha_sealed, open_all(chacha, chacha_sealed)),
        (
            "secretstream",
            stream_sealed,
            pull_all(stream_key, stream_header, stream_sealed),
        ),
    ]:
        if b"".join(opened) != data:
            raise AssertionError(f"{name}: opening did not give the plaintext back")
        if any(len(chunk) != CHUNK for chunk in sealed[:-1]) or len(sealed[-1]) > CHUNK:
            raise AssertionError(
                f"{name}: sealed pieces are not the body's 4 MiB chunks"
            )

    runs: dict[str, Callable[[], object]] = {
        "SHA-256 (hashlib), the baseline": lambda: digest_all(chunks),
        "AES-256-GCM seal (cryptography)": lambda: seal_all(aes, gcm_plain),
        "AES-256-GCM open (cryptography)": lambda: open_all(aes, aes_sealed),
        "XChaCha20-Poly1305 secretstream push": lambda: push_all(
            stream_key, stream_plain
        ),
        "XChaCha20-Poly1305 secretstream pull": lambda: pull_all(
            stream_key, stream_header, stream_sealed
        ),
        "ChaCha20-Poly1305 seal (cryptography)": lambda: seal_all(chacha, gcm_plain),
        "ChaCha20-Poly1305 open (cryptography)": lambda: open_all(
            chacha, chacha_sealed
        ),
    }
    best = harness.interleaved_best(args.repeats, runs)
    baseline = best["SHA-256 (hashlib), the baseline"]

    print(
        f"{args.mib} MiB in {len(chunks)} chunks of 4 MiB, best of {args.repeats}; "
        f"{openssl.openssl_version_text()}, PyNaCl {nacl.__version__}"
    )
    for name, seconds in best.items():
        print(
            f"{name:38s} {seconds:7.3f} s  {size / seconds / 1e9:6.2f} GB/s  "
            f"{seconds / baseline:5.2f}x the SHA-256 time"
        )


if __name__ == "__main__":
    main()

"""Test helper: saved-engine files and weight digest records written in pure Python.

It follows the documented on-disk format of cpp/src/cache/engine_file.hpp (magic
"TSRCLENG", u32 LE version 2, u64 LE header length, canonical JSON header whose "plan" member
holds the plan's size, its XXH3-128 checksum and each 4 MiB chunk's SHA-256 and XXH3-128, plan
bytes; version 1, written before chunk digests existed, has no "chunks") and the record format
of weight_digest.cpp, so the `tensoracle cache` tests need no bindings.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from pathlib import Path
from typing import Any

import xxhash

MAGIC = b"TSRCLENG"
FORMAT_VERSION = 2
CHUNK_BYTES = 4 << 20


def canonical_json(value: Any) -> bytes:
    """Compact JSON with sorted keys: the one spelling tensoracle accepts in headers."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def plan_checksum_hex(plan: bytes) -> str:
    """XXH3-128 in xxHash's canonical byte order (high 64 bits first), as the store writes it."""
    return xxhash.xxh3_128_hexdigest(plan)


def plan_member(plan: bytes, format_version: int = FORMAT_VERSION) -> dict[str, Any]:
    """The header's "plan" member: size and checksum, and in version 2 each chunk's digests."""
    member: dict[str, Any] = {"size": len(plan), "xxh3_128": plan_checksum_hex(plan)}
    if format_version == 2:
        chunks = [plan[at : at + CHUNK_BYTES] for at in range(0, len(plan), CHUNK_BYTES)]
        member["chunks"] = {
            "sha256": [sha256_hex(chunk) for chunk in chunks],
            "xxh3_128": [plan_checksum_hex(chunk) for chunk in chunks],
        }
    return member


def engine_file_bytes(
    conditions: dict[str, Any],
    references: dict[str, Any] | None = None,
    plan: bytes = b"",
    *,
    format_version: int = FORMAT_VERSION,
) -> bytes:
    header = canonical_json(
        {
            "conditions": conditions,
            "references": references if references is not None else {},
            "plan": plan_member(plan, format_version),
        }
    )
    return MAGIC + struct.pack("<IQ", format_version, len(header)) + header + plan


def engine_file_name(conditions: dict[str, Any]) -> str:
    return f"{conditions['name']}-{sha256_hex(canonical_json(conditions))}.engine"


def set_mtime_ns(path: Path, mtime_ns: int) -> None:
    os.utime(path, ns=(path.stat().st_atime_ns, mtime_ns), follow_symlinks=False)


def write_engine(
    directory: Path,
    conditions: dict[str, Any],
    *,
    references: dict[str, Any] | None = None,
    plan: bytes = b"plan",
    mtime_ns: int | None = None,
    file_name: str | None = None,
) -> Path:
    """Writes a valid saved engine; its name follows the store's "<name>-<digest>.engine"."""
    path = directory / (file_name or engine_file_name(conditions))
    path.write_bytes(engine_file_bytes(conditions, references, plan))
    if mtime_ns is not None:
        set_mtime_ns(path, mtime_ns)
    return path


def write_file(path: Path, data: bytes, mtime_ns: int | None = None) -> Path:
    path.write_bytes(data)
    if mtime_ns is not None:
        set_mtime_ns(path, mtime_ns)
    return path


def write_weight_record(directory: Path, weight_file: Path, sha256: str) -> Path:
    """Records `sha256` for `weight_file` (absolute) as the store does, self-checksum included."""
    absolute = weight_file.absolute()
    status = absolute.stat()
    fields: dict[str, Any] = {
        "inode": status.st_ino,
        "mtime_ns": status.st_mtime_ns,
        "path": str(absolute),
        "sha256": sha256,
        "size": status.st_size,
    }
    fields["record_sha256"] = sha256_hex(canonical_json(fields))
    record = directory / f"weight-{sha256_hex(str(absolute).encode())}.json"
    record.write_bytes(canonical_json(fields))
    return record


def snapshot(directory: Path) -> dict[str, tuple[int, int, str]]:
    """Every file's size, modification time (ns) and content digest, to prove nothing changed."""
    return {
        path.name: (path.stat().st_size, path.stat().st_mtime_ns, sha256_hex(path.read_bytes()))
        for path in sorted(directory.iterdir())
        if path.is_file()
    }


def header(path: Path) -> dict:
    """The saved file's JSON header (magic, u32 version, u64 length, JSON)."""
    data = path.read_bytes()
    (length,) = struct.unpack_from("<Q", data, 12)
    return json.loads(data[20 : 20 + length])

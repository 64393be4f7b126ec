"""Test helper: saved-engine files crafted as someone with write access to a cache folder or to
the fleet's bucket would, to make a reader crash or misbehave. Written as bytes by hand, since
the JSON cannot be produced by a serializer (too deep, not UTF-8, mistyped members)."""

from __future__ import annotations

import struct
from typing import Any

from engine_files import FORMAT_VERSION, MAGIC, canonical_json, plan_member


def engine_with_header_text(conditions: dict[str, Any], references: bytes, plan: bytes) -> bytes:
    """An engine file whose header holds ``conditions`` and the raw JSON text ``references``,
    in the canonical member order, so that only what ``references`` holds is wrong."""
    header = (
        b'{"conditions":'
        + canonical_json(conditions)
        + b',"plan":'
        + canonical_json(plan_member(plan))
        + b',"references":'
        + references
        + b"}"
    )
    return MAGIC + struct.pack("<IQ", FORMAT_VERSION, len(header)) + header + plan


def nested_references(depth: int = 20_000) -> bytes:
    """A 40 KB references object nested ``depth`` levels deep."""
    return b'{"a":' + b"[" * depth + b"]" * depth + b"}"


def invalid_utf8_references() -> bytes:
    return b'{"built_at":"2026-12-01\xff\xfe"}'


def mistyped_io_references() -> bytes:
    return b'{"io":"FLOAT"}'


def many_empty_objects(count: int = 256_000) -> bytes:
    """768 KB of references that are one array of empty objects: the shape that made the parser
    quadratic (each object's end scanned the whole array), 20 s per read."""
    return b"[" + b",".join([b"{}"] * count) + b"]"


HOSTILE = {
    "256,000 empty objects": many_empty_objects,
    "nested 20,000 levels": nested_references,
    "invalid UTF-8": invalid_utf8_references,
    "references.io of the wrong type": mistyped_io_references,
}

"""Limits every declared value meets before a build starts, so that nothing the store or
TensorRT would refuse later (after a wasted build, or without naming the field) gets in.

- Text (names, versions, tensor names) must be encodable as UTF-8 (no lone surrogates) and at
  most ``MAX_TEXT_BYTES`` long: it is written into the saved header, which is bounded.
- Integers that TensorRT takes as 64-bit (dimensions, the workspace limit) must fit in int64.

The limit on a whole identity, made of these fields, is the identity's own
(``tensoracle.cache.identity.check_conditions_size``).
"""

from __future__ import annotations

MAX_TEXT_BYTES = 64 * 1024
INT64_MAX = 2**63 - 1


def check_text(field: str, value: str) -> str:
    """``value`` when it is UTF-8 text of at most MAX_TEXT_BYTES; ValueError naming ``field``."""
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError as error:
        bad = value[error.start : error.end]
        raise ValueError(
            f"{field} holds {bad!r} at position {error.start}, which is not text "
            "(a lone surrogate cannot be written as UTF-8)"
        ) from None
    if size > MAX_TEXT_BYTES:
        raise ValueError(
            f"{field} is {size} bytes long in UTF-8; the limit is {MAX_TEXT_BYTES} bytes"
        )
    return value


def check_int64(field: str, value: int) -> int:
    """``value`` when it fits TensorRT's 64-bit integers; ValueError naming ``field``."""
    if value > INT64_MAX:
        raise ValueError(f"{field} holds {value}, beyond the largest 64-bit value {INT64_MAX}")
    return value

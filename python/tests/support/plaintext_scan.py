"""Searching what a test wrote for a plaintext plan: a file "holds the plan" when it holds any
4 KiB window of it, at any offset.

Every 4 KiB window of the plan contains at least three whole 1 KiB blocks at 1 KiB-aligned plan
offsets. Each such block that carries information (16 distinct byte values or more; runs of
padding would match any file's padding) is searched for, and every place it is found is
extended byte by byte in both directions, against the plan, until the bytes differ: a window is
found where the match spans 4 KiB. A window whose three inner blocks are all padding is no
information about the plan and is not looked for."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

import numpy as np

WINDOW = 4096
BLOCK = 1024
_DISTINCT = 16


def _common_prefix(first: bytes, second: bytes) -> int:
    size = min(len(first), len(second))
    left = np.frombuffer(first, dtype=np.uint8, count=size)
    right = np.frombuffer(second, dtype=np.uint8, count=size)
    differing = np.flatnonzero(left != right)
    return int(differing[0]) if differing.size else size


def window_in(plan: bytes, data: bytes) -> int | None:
    """The plan offset of a 4 KiB window of ``plan`` that ``data`` holds, or None."""
    if len(plan) < WINDOW:
        raise ValueError(f"a plan of {len(plan)} bytes has no {WINDOW}-byte window")
    reach = WINDOW - BLOCK
    for start in range(0, len(plan) - BLOCK + 1, BLOCK):
        block = plan[start : start + BLOCK]
        if len(set(block)) < _DISTINCT:
            continue
        at = data.find(block)
        while at != -1:
            before = _common_prefix(
                data[max(0, at - reach) : at][::-1], plan[max(0, start - reach) : start][::-1]
            )
            after = _common_prefix(
                data[at + BLOCK : at + BLOCK + reach], plan[start + BLOCK : start + BLOCK + reach]
            )
            if before + BLOCK + after >= WINDOW:
                return start - before
            at = data.find(block, at + 1)
    return None


def written_files(roots: Iterable[Path]) -> list[Path]:
    """Every regular file under ``roots`` (symbolic links not followed)."""
    found = []
    for root in roots:
        for folder, _dirs, files in os.walk(root):
            for name in files:
                path = Path(folder) / name
                if stat.S_ISREG(path.lstat().st_mode):
                    found.append(path)
    return sorted(found)


def files_holding(
    plan: bytes, roots: Iterable[Path], exclude: Iterable[Path] = ()
) -> dict[str, int]:
    """{path: plan offset} of every regular file under ``roots`` (but ``exclude``) that holds a
    4 KiB window of ``plan``."""
    skipped = {Path(path) for path in exclude}
    holding = {}
    for path in written_files(roots):
        if path in skipped:
            continue
        offset = window_in(plan, path.read_bytes())
        if offset is not None:
            holding[str(path)] = offset
    return holding


# Large plans made for a search: records of RECORD bytes, each a tag that occurs nowhere else,
# the record's number (8 bytes, big-endian) and random bytes. Any 4 KiB window of such a plan
# holds whole records, so a file holding one holds the tag: found by one search per tag, each
# place then checked against the plan as above.
RECORD = 512
_TAG = b"\x00plaintext plan\xff"


def tagged_plan(size: int, seed: int = 0) -> bytes:
    """A plan of ``size`` bytes made of tagged records."""
    records = -(-size // RECORD)
    body = np.random.default_rng(seed).integers(0, 256, (records, RECORD), dtype=np.uint8)
    body[:, : len(_TAG)] = np.frombuffer(_TAG, dtype=np.uint8)
    numbers = np.arange(records, dtype=">u8").view(np.uint8).reshape(records, 8)
    body[:, len(_TAG) : len(_TAG) + 8] = numbers
    return body.tobytes()[:size]


def tagged_window_in(plan: bytes, data: bytes) -> int | None:
    """The plan offset of a 4 KiB window of the tagged ``plan`` that ``data`` holds, or None."""
    at = data.find(_TAG)
    while at != -1:
        number = int.from_bytes(data[at + len(_TAG) : at + len(_TAG) + 8], "big")
        start = number * RECORD
        if start < len(plan):
            before = _common_prefix(data[max(0, at - WINDOW) : at][::-1],
                                    plan[max(0, start - WINDOW) : start][::-1])  # fmt: skip
            after = _common_prefix(data[at : at + WINDOW], plan[start : start + WINDOW])
            if before + after >= WINDOW:
                return start - before
        at = data.find(_TAG, at + 1)
    return None


def files_holding_tagged(
    plan: bytes, roots: Iterable[Path], exclude: Iterable[Path] = ()
) -> dict[str, int]:
    """``files_holding`` for a tagged plan."""
    skipped = {Path(path) for path in exclude}
    holding = {}
    for path in written_files(roots):
        if path not in skipped:
            offset = tagged_window_in(plan, path.read_bytes())
            if offset is not None:
                holding[str(path)] = offset
    return holding

"""Benchmark: a 16 MiB engine header of the worst JSON shapes, decoded by the core, vs reading
the same file.

Each shape fills the header up to the 16 MiB limit inside ``references``: many small objects
(``[{},{},...]``, the shape that made the old parser quadratic), a long array of numbers, many
branches nested exactly to the 64-level limit, the same with its first branch one level deeper,
and one long string. The core decodes each header through ``_core.decode_engine_header``, the
path of ``cache list``, ``cache verify`` and ``open_engine`` (parse within the limits, schema,
canonical spelling), parsing it or refusing it: the first three pass the header's cap of 2^18
values and are refused by the parser's pre-scan before any value is built, the fourth passes the
depth limit, the string is within every limit and is parsed. The time measured is reading the
file and decoding it; the baseline is reading the same file from the warm page cache in the same
round. Each shape's ratio (decode / baseline) is printed with whether it meets the goal of at
most 2x; Python's ``json.loads`` of the same bytes is printed for comparison. Rounds are
interleaved and the best of each is kept.

Then the red team's reproduction: ``tensoracle cache list`` on a cache folder whose one entry's
header is an array of 256,000 empty objects (768 KB), in seconds (20 s with the old parser).

Run: .venv/bin/python bench/json_parse.py [--mib N] [--repeats N] [--objects N] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import harness
from engine_files import FORMAT_VERSION, MAGIC, canonical_json, plan_checksum_hex
from tensoracle import _core
from tensoracle.errors import CorruptEngineError

GOAL = 2.0
PLAN = b"plan"
# The header object and references are two levels: what the shape may add below them.
SHAPE_DEPTH = 64 - 2


def many_objects(budget: int) -> bytes:
    count = (budget - 1) // 3
    return b"[" + b",".join([b"{}"] * count) + b"]"


def long_array(budget: int) -> bytes:
    count = (budget - 1) // 2
    return b"[" + b",".join([b"0"] * count) + b"]"


def branches(budget: int, first_extra: int = 0) -> bytes:
    """Arrays of branches that reach exactly the depth limit (``first_extra`` more levels in
    the first one)."""
    inner = SHAPE_DEPTH - 1
    branch = b"[" * inner + b"]" * inner
    count = (budget - 2 - 2 * first_extra) // (len(branch) + 1)
    first = b"[" * (inner + first_extra) + b"]" * (inner + first_extra)
    return b"[" + b",".join([first] + [branch] * (count - 1)) + b"]"


def long_string(budget: int) -> bytes:
    return b'"' + b"x" * (budget - 2) + b'"'


SHAPES: dict[str, Callable[[int], bytes]] = {
    "many small objects": many_objects,
    "long array of numbers": long_array,
    "branches at the depth limit": branches,
    "one level beyond the limit": lambda budget: branches(budget, first_extra=1),
    "one long string": long_string,
}


def engine_with_references(references: bytes) -> bytes:
    """A saved engine whose header is canonical, with ``references`` = {"a": <references>}."""
    plan_member = canonical_json(
        {"size": len(PLAN), "xxh3_128": plan_checksum_hex(PLAN)}
    )
    header = (
        b'{"conditions":{"name":"m"},"plan":'
        + plan_member
        + b',"references":{"a":'
        + references
        + b"}}"
    )
    return MAGIC + struct.pack("<IQ", FORMAT_VERSION, len(header)) + header + PLAN


def header_budget(size: int) -> int:
    """Bytes left to the shape in a header of ``size`` bytes."""
    return size - (len(engine_with_references(b"")) - 20 - len(PLAN))


def decode(path: Path) -> str:
    data = path.read_bytes()
    try:
        _core.decode_engine_header(data, len(data), str(path))
    except CorruptEngineError as error:
        return f"refused: {str(error).split(': ', 1)[-1][:70]}"
    return "accepted"


def shapes(directory: Path, mib: float, repeats: int) -> bool:
    size = int(mib * (1 << 20))
    met = True
    print(f"header of {size:,} bytes per shape, best of {repeats}")
    columns = ("read", "decode", "ratio", "goal", "json.loads")
    print(f"{'shape':30s} {'outcome':34s} " + " ".join(f"{c:>8s}" for c in columns))
    for name, make in SHAPES.items():
        path = directory / "shape.engine"
        path.write_bytes(engine_with_references(make(header_budget(size))))
        outcome = decode(path)  # also warms the page cache
        header = path.read_bytes()[20 : -len(PLAN)]
        assert len(header) <= size, (name, len(header))

        def python_loads(text: bytes = header) -> None:
            try:
                json.loads(text)
            except RecursionError:
                pass

        best = harness.interleaved_best(
            repeats,
            {
                "read": path.read_bytes,
                "decode": lambda p=path: decode(p),
                "loads": python_loads,
            },
        )
        ratio = best["decode"] / best["read"]
        met = met and ratio <= GOAL
        verdict = "met" if ratio <= GOAL else "MISSED"
        print(
            f"{name:30s} {outcome[:34]:34s} {best['read']:7.4f}s {best['decode']:7.4f}s "
            f"{ratio:7.2f}x {verdict:>8s} {best['loads']:9.3f}s"
        )
    return met


def red_team(directory: Path, objects: int, repeats: int) -> None:
    tensoracle = shutil.which("tensoracle", path=str(Path(sys.executable).parent))
    tensoracle = tensoracle or shutil.which("tensoracle")
    if tensoracle is None:
        sys.exit("the tensoracle command is not installed (make python)")
    cache = directory / "cache"
    cache.mkdir()
    header = b"[" + b",".join([b"{}"] * objects) + b"]"
    entry = cache / f"m-{'0' * 64}.engine"
    entry.write_bytes(
        MAGIC + struct.pack("<IQ", FORMAT_VERSION, len(header)) + header + PLAN
    )
    listing = [tensoracle, "cache", "list", "--cache-dir", str(cache)]
    listed = subprocess.run(listing, capture_output=True, text=True, check=False)
    [status] = [e["status"] for e in json.loads(listed.stdout)["entries"]]
    best = harness.interleaved_best(
        repeats,
        {
            "list": lambda: subprocess.run(
                listing, stdout=subprocess.DEVNULL, check=False
            )
        },
    )
    print(
        f"red team: cache list, one header of {objects:,} empty objects ({len(header):,} bytes): "
        f"{best['list']:.3f} s (entry {status})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=16.0, help="header size per shape")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--objects", type=int, default=256_000, help="red team's header"
    )
    args = harness.parse(parser, {"mib": 0.5, "repeats": 1, "objects": 32_000})
    if not 0 < args.mib <= 16:
        sys.exit("--mib: a header holds at most 16 MiB")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as temporary:
        met = shapes(Path(temporary), args.mib, args.repeats)
        red_team(Path(temporary), args.objects, args.repeats)
    print(
        f"goal decode <= {GOAL}x reading the file, every shape: {'met' if met else 'NOT met'}"
    )


if __name__ == "__main__":
    main()

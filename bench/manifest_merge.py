"""Times `tensoracle manifest merge` of a sharded build's parts against the same merge of a build
one tenth the size.

Run: .venv/bin/python bench/manifest_merge.py [--entries N] [--parts P] [--repeats R]
     [--tensoracle PATH] [--quick]
The build has N recipes (distinct names, each of one entry), split into P parts as
`tensoracle build --shard I/P` splits them; each part's manifest holds its entries and the build's
recipe list. The baseline is the same command on a build of N/10 recipes, timed in the same rounds
(interleaved, best of R): a merge whose work grows linearly with the entries takes at most about
10x its baseline, one that looks every entry up among all recipes (as it did before) about 100x.
Goal: at most 12x. --tensoracle names the command to time (default: the one installed beside this
Python, else on PATH), for instance build/cpp/tensoracle of a build under test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import harness
from engine_files import engine_file_name

GOAL_RATIO = 12.0
SCALE = 10


def entry(recipe: str) -> dict[str, Any]:
    """A manifest entry as `tensoracle build --manifest` writes it (the C++ tests' shape)."""
    conditions = {
        "name": recipe,
        "graph_version": "1",
        "backend": "tensorrt_rtx",
        "backend_version": "1.7.1.116",
        "gpu": None,
        "targets": ["sm86", "sm89"],
    }
    return {
        "recipe": recipe,
        "graph_version": "1",
        "file_name": engine_file_name(conditions),
        "conditions": conditions,
        "backend": "tensorrt_rtx",
        "backend_version": "1.7.1.116",
        "targets": ["sm86", "sm89"],
        "hardware_compatibility": None,
        "io": None,
        "plan": {"size": 1024, "xxh3_128": "a" * 32},
        "engine_bytes": 1500,
        "fleet": None,
    }


def write_parts(directory: Path, entries: int, parts: int) -> list[str]:
    """The parts' manifests of a build of `entries` recipes; returns their paths.

    The package's order is not the sorted one (the names count down), so that the merge has to
    place every entry; the split is build_shard.py's: sorted position p in part p mod `parts`."""
    directory.mkdir()
    names = [f"recipe{index:07d}" for index in reversed(range(entries))]
    recipes = [{"recipe": name, "graph_version": "1"} for name in names]
    owner = {name: rank % parts for rank, name in enumerate(sorted(names))}
    paths = []
    for index in range(parts):
        document = {
            "schema_version": 1,
            "spec": "model:RECIPES",
            "remote": None,
            "entries": [entry(name) for name in names if owner[name] == index],
            "shard": {"index": index, "count": parts, "recipes": recipes},
        }
        path = directory / f"deploy-{index}.json"
        path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
        paths.append(str(path))
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=50_000)
    parser.add_argument("--parts", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tensoracle", default=None)
    args = harness.parse(parser, {"entries": 400, "repeats": 1})
    scripts = Path(sys.executable).parent
    tensoracle = (
        args.tensoracle
        or shutil.which("tensoracle", path=str(scripts))
        or shutil.which("tensoracle")
    )
    if tensoracle is None:
        sys.exit("the tensoracle command is not installed (make python)")
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        whole = write_parts(root / "whole", args.entries, args.parts)
        tenth = write_parts(root / "tenth", max(args.entries // SCALE, 1), args.parts)

        def merge(parts: list[str]) -> None:
            command = [
                tensoracle,
                "manifest",
                "merge",
                *parts,
                "-o",
                str(root / "out.json"),
            ]
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                sys.exit(f"{' '.join(command[:3])} failed: {done.stderr.strip()}")

        merge(whole)  # warm the page cache; a refusal fails here, before any timing
        merged = json.loads((root / "out.json").read_text())
        assert len(merged["entries"]) == args.entries, "the merge lost entries"
        best = harness.interleaved_best(
            args.repeats, {"whole": lambda: merge(whole), "tenth": lambda: merge(tenth)}
        )
    ratio = best["whole"] / best["tenth"]
    print(f"entries: {args.entries} in {args.parts} parts, repeats: {args.repeats}")
    print(f"manifest merge of {args.entries} entries: best {best['whole']:.3f} s")
    print(
        f"manifest merge of {max(args.entries // SCALE, 1)} entries (baseline): "
        f"best {best['tenth']:.3f} s"
    )
    print(f"cpu count: {os.cpu_count()}; load average: {os.getloadavg()[0]:.2f}")
    print(f"ratio (best/best): {ratio:.1f}x the baseline, for {SCALE}x the entries")
    print(f"goal <= {GOAL_RATIO:g}x: {'met' if ratio <= GOAL_RATIO else 'NOT met'}")


if __name__ == "__main__":
    main()

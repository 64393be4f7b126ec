"""``tensoracle build --shard I/N``: the I-th of N disjoint parts of the recipes a build would
prepare, so that N machines (a CI matrix, a Kubernetes Indexed Job) share one package's builds.

The split is the same on every machine and does not depend on the order of the recipes in the
package: the recipes are sorted by name, graph version and occurrence (the k-th recipe of the
same name and graph version), and the one at sorted position p belongs to part ``p mod N``. Each
part writes its own manifest (``--manifest``), which records the part and every recipe of the
whole build in the package's order (``shard``); ``tensoracle manifest merge`` joins the N parts'
manifests into the one an unsharded build writes.

``--shard auto/N`` takes I from ``JOB_COMPLETION_INDEX`` (set by a Kubernetes Indexed Job) or
``TENSORACLE_SHARD_INDEX``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tensoracle.engine.recipe import EngineRecipe

INDEX_VARIABLES = ("JOB_COMPLETION_INDEX", "TENSORACLE_SHARD_INDEX")


class ShardError(ValueError):
    """A ``--shard`` value that names no part."""


@dataclass(frozen=True)
class Shard:
    """Part ``index`` (from 0) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def _whole(text: str, what: str) -> int:
    if not text.isascii() or not text.isdigit():
        raise ShardError(f"{what} is {text!r}, not a whole number")
    return int(text)


def parse_shard(text: str, environ: Mapping[str, str] | None = None) -> Shard:
    """The part ``--shard`` names: ``I/N`` with 0 <= I < N, or ``auto/N`` with I from the first
    of ``INDEX_VARIABLES`` that is set. ``ShardError`` naming the value otherwise."""
    found = os.environ if environ is None else environ
    index_text, slash, count_text = text.partition("/")
    if not slash:
        raise ShardError(f"--shard {text!r}: expected I/N (such as 0/4) or auto/N")
    count = _whole(count_text, f"--shard {text!r}: N")
    if count < 1:
        raise ShardError(f"--shard {text!r}: N is {count}; at least 1 part is needed")
    if index_text == "auto":
        named = [(name, found[name]) for name in INDEX_VARIABLES if found.get(name, "") != ""]
        if not named:
            raise ShardError(
                f"--shard {text!r}: no part index in the environment: set "
                f"{' or '.join(INDEX_VARIABLES)}, or give it as I/N"
            )
        name, value = named[0]
        index = _whole(value, f"--shard {text!r}: {name}")
        where = f"{name}={value}"
    else:
        index = _whole(index_text, f"--shard {text!r}: I")
        where = f"I={index}"
    if index >= count:
        raise ShardError(f"--shard {text!r}: {where} is not a part of {count} (0 to {count - 1})")
    return Shard(index, count)


def _keys(recipes: Sequence[EngineRecipe]) -> list[tuple[str, str, int]]:
    """Each recipe's key: name, graph version, and which occurrence of that pair it is."""
    seen: dict[tuple[str, str], int] = {}
    keys = []
    for recipe in recipes:
        pair = (recipe.name, recipe.graph_version)
        keys.append((*pair, seen.get(pair, 0)))
        seen[pair] = seen.get(pair, 0) + 1
    return keys


def positions(recipes: Sequence[EngineRecipe], shard: Shard) -> list[int]:
    """The positions (in ``recipes``' order) of the recipes that belong to ``shard``."""
    keys = _keys(recipes)
    ordered = sorted(range(len(recipes)), key=lambda position: keys[position])
    mine = {position for rank, position in enumerate(ordered) if rank % shard.count == shard.index}
    return [position for position in range(len(recipes)) if position in mine]


def record(recipes: Sequence[EngineRecipe], shard: Shard) -> dict[str, Any]:
    """The manifest's ``shard`` member: the part, and every recipe of the whole build in the
    package's order, from which ``manifest merge`` checks and orders the parts' entries."""
    return {
        "index": shard.index,
        "count": shard.count,
        "recipes": [
            {"recipe": recipe.name, "graph_version": recipe.graph_version} for recipe in recipes
        ],
    }

"""``EngineRecipe``: everything ``open_engine`` needs to make one engine, bundled in one value.

A model package exports its recipes (see ``tensoracle.engine.recipe_loader``) so that a build
farm can prepare and publish its engines ahead of time (``tensoracle build``), and the package
opens them with ``recipe.open()``: the same arguments, so the same identity, in both places.

Weight and plugin paths are kept as given. Like ``open_engine``, ``open`` and ``prepare`` resolve
a relative path against the working directory of the call, so a package should give absolute
paths built from its own location (``Path(__file__).parent / "model.safetensors"``).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any

from tensoracle.cache.protocol import _check_arguments
from tensoracle.engine.build import Graph
from tensoracle.engine.declaration import EngineBuild
from tensoracle.engine.handle import EngineHandle
from tensoracle.engine.io import EngineIO
from tensoracle.engine.open import PreparedEngine, open_engine, prepare_engine
from tensoracle.engine.plugins import plugin_paths as check_plugin_paths


def _plugins(value: Any) -> tuple[str | os.PathLike[str], ...]:
    if isinstance(value, str | bytes | os.PathLike) or not isinstance(value, Iterable):
        raise ValueError(f"plugins must be a sequence of paths, not {value!r}")
    entries = tuple(value)
    check_plugin_paths(entries)
    return entries


@dataclass(frozen=True)
class EngineRecipe:
    """The arguments of ``open_engine`` that define an engine: graph, declaration, name, graph
    version, weights, io and plugins. Checked when made (ValueError naming the field and the
    value), with the checks ``open_engine`` makes before it builds."""

    graph: Graph
    declaration: EngineBuild
    _: KW_ONLY
    name: str
    graph_version: str
    weights: Sequence[str | os.PathLike[str]]
    io: EngineIO
    plugins: Sequence[str | os.PathLike[str]] = ()

    def __post_init__(self) -> None:
        named = f" {self.name!r}" if isinstance(self.name, str) and self.name else ""
        try:
            _check_arguments(
                self.graph,
                self.declaration,
                self.name,
                self.graph_version,
                self.weights,
                self.io,
                False,
                False,
            )
            plugins = _plugins(self.plugins)
        except ValueError as error:
            raise ValueError(f"EngineRecipe{named}: {error}") from None
        object.__setattr__(self, "weights", tuple(self.weights))
        object.__setattr__(self, "plugins", plugins)

    def _arguments(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "graph_version": self.graph_version,
            "weights": self.weights,
            "io": self.io,
            "plugins": self.plugins,
        }

    def open(
        self,
        *,
        force_rebuild: bool = False,
        logger: Any = None,
        progress: Any = None,
        remote: str | None = None,
        encrypt_to: Sequence[str | os.PathLike[str]] = (),
        decrypt_key: str | os.PathLike[str] | None = None,
    ) -> EngineHandle:
        """``open_engine`` with this recipe's arguments and the given options."""
        return open_engine(
            self.graph,
            self.declaration,
            **self._arguments(),
            force_rebuild=force_rebuild,
            logger=logger,
            progress=progress,
            remote=remote,
            encrypt_to=encrypt_to,
            decrypt_key=decrypt_key,
        )

    def prepare(
        self,
        *,
        force_rebuild: bool = False,
        logger: Any = None,
        progress: Any = None,
        remote: str | None = None,
        encrypt_to: Sequence[str | os.PathLike[str]] = (),
    ) -> PreparedEngine:
        """``prepare_engine`` with this recipe's arguments and the given options: fills the cache
        (and, with a remote cache, the fleet's) without deserializing the engine."""
        return prepare_engine(
            self.graph,
            self.declaration,
            **self._arguments(),
            force_rebuild=force_rebuild,
            logger=logger,
            progress=progress,
            remote=remote,
            encrypt_to=encrypt_to,
        )

    def with_targets(self, targets: Iterable[str] | None) -> EngineRecipe:
        """A copy whose declaration builds for ``targets`` (``BuilderSettings.targets``: smXY
        names, ``("current",)``, or None for the backend's default); nothing else changes."""
        if isinstance(targets, str):
            raise ValueError(
                f"targets must be a sequence of compute capabilities such as ('sm89', 'sm120'), "
                f"not the single string {targets!r}"
            )
        chosen = None if targets is None else tuple(targets)
        settings = dataclasses.replace(self.declaration.settings, targets=chosen)
        declaration = dataclasses.replace(self.declaration, settings=settings)
        return dataclasses.replace(self, declaration=declaration)

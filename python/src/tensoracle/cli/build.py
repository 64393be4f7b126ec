"""``tensoracle build MODULE:ATTRIBUTE``: prepares the engines of a model package's recipes, and
with ``--push`` publishes them to the remote cache, so the package's users download them.

Each recipe runs ``recipe.prepare`` (no CUDA device needed with TensorRT-RTX), for the targets of
``--targets`` when given. With ``--push`` the remote cache is consulted and published to as
``prepare_engine(remote=URL)`` does (signed when ``TENSORACLE_REMOTE_SIGNING_KEY`` is set), and an
entry that was already in the local cache is published the way ``cache push`` publishes it when
the remote cache lacks it. Without ``--push`` only the local cache is used, whatever
``TENSORACLE_REMOTE`` says. A recipe that fails is reported in its row; the others still run.
Exit status: 0 when every recipe succeeded, 1 when one failed, 2 for invalid usage.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tensoracle import _core
from tensoracle.cache.remote.config import REMOTE, configure
from tensoracle.cache.remote.objects import RemoteObjects, RemoteUnavailable, engine_key
from tensoracle.cli.build_report import ALREADY, BUILT, REUSED, YES, Row, document, table
from tensoracle.cli.cache_push import publishing_key, push_entry
from tensoracle.cli.output_format import (
    JSON,
    TABLE,
    FormatError,
    add_format_option,
    chosen_format,
)
from tensoracle.cli.remote_cache import (
    EXIT_FAILURE,
    EXIT_SUCCESS,
    Parser,
    UsageError,
    print_json,
    run,
)
from tensoracle.engine.declaration import BuilderSettings
from tensoracle.engine.recipe import EngineRecipe
from tensoracle.engine.recipe_loader import RecipeSpecError, load_recipes
from tensoracle.errors import EngineCacheError, RemoteCacheWarning

USAGE = (
    "tensoracle build MODULE:ATTRIBUTE [--targets SM[,SM...]] [--push [URL]] [--force-rebuild] "
    "[--format json|table]"
)


class NotPublished(Exception):
    """The remote cache holds an object for the entry that this node did not accept."""


@dataclass(frozen=True)
class Publisher:
    """Where ``--push`` publishes, and the key it signs with (None: unsigned)."""

    objects: RemoteObjects
    signing: Any

    @property
    def url(self) -> str:
        return self.objects.config.url

    def publish(self, path: Path, built: bool, forced: bool, warned: list[str]) -> str:
        """Makes sure the remote cache holds the entry saved at ``path``: YES when this run put
        it there, ALREADY when it was published before. A build that met no RemoteCacheWarning
        was published by ``prepare``, create-only: after a forced rebuild, the object is this
        build only if it starts with the saved header. Otherwise the entry is pushed as
        ``cache push`` pushes it."""
        key = engine_key(path.name)
        if built and not warned:
            if not forced:
                return YES
            header = _header(path)
            found = self.objects.get_range(key, 0, len(header))
            if found is not None:
                return YES if bytes(found) == header else ALREADY
        if self.objects.get_range(key, 0, 1) is not None:
            if built:
                raise NotPublished(
                    f"{self.objects.url(key)} exists but this node built instead of using it: "
                    + "; ".join(warned)
                )
            return ALREADY
        pushed, _size = push_entry(self.objects, path, self.signing)
        return YES if pushed else ALREADY


def _parser(prog: str) -> Parser:
    made = Parser(
        prog=prog,
        allow_abbrev=False,  # --force is not --force-rebuild
        description="Prepare the engines of a model package's recipes (MODULE:ATTRIBUTE holds an "
        "EngineRecipe, a list or tuple of them, or a dict of them) and, with --push, publish "
        "them to the remote cache. Exit status: 0 success, 1 a recipe failed, 2 invalid usage.",
    )
    made.add_argument("spec", metavar="MODULE:ATTRIBUTE", help="where the recipes are")
    made.add_argument(
        "--targets",
        metavar="SM[,SM...]",
        help="build for these compute capabilities (e.g. sm86,sm89,sm120) instead of the "
        "targets each recipe declares",
    )
    made.add_argument(
        "--push",
        nargs="?",
        const="",
        metavar="URL",
        help=f"publish to the remote cache s3://BUCKET[/PREFIX]; without a value, ${REMOTE}",
    )
    made.add_argument(
        "--force-rebuild", action="store_true", help="build even where a saved engine exists"
    )
    add_format_option(made, TABLE, deprecated_json=True)
    return made


def _targets(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    try:
        checked = BuilderSettings(targets=tuple(part.strip() for part in text.split(","))).targets
    except ValueError as error:
        raise UsageError(f"--targets {text!r}: {error}") from error
    return checked


def _publisher(url: str) -> Publisher:
    try:
        config = configure(url or None)
    except ValueError as error:
        raise UsageError(f"--push: {error}") from error
    if config is None:
        raise UsageError(f"--push: no remote cache: give s3://BUCKET[/PREFIX] or set {REMOTE}")
    signing = publishing_key(config)
    return Publisher(RemoteObjects(config), signing)


def _header(path: Path) -> bytes:
    """The first bytes of a saved engine file: its preamble and its header."""
    with path.open("rb") as file:
        prefix = file.read(_core.ENGINE_PREAMBLE_BYTES)
        return prefix + file.read(_core.engine_prefix_bytes(prefix) - len(prefix))


def _saved_targets(path: Path) -> list[str] | None:
    """The targets the saved entry's header records, or None when it cannot be read."""
    try:
        header = _header(path)
        size = path.stat().st_size
        _conditions, references, _offset = _core.decode_engine_header(header, size, str(path))
    except (OSError, EngineCacheError):
        return None
    recorded = json.loads(references)
    targets = recorded.get("targets") if isinstance(recorded, dict) else None
    return [str(target) for target in targets] if isinstance(targets, list) else None


def _make(
    recipe: EngineRecipe,
    targets: tuple[str, ...] | None,
    publisher: Publisher | None,
    force_rebuild: bool,
) -> Row:
    started = time.monotonic()
    declared = targets or recipe.declaration.settings.targets
    row = Row(recipe.name, recipe.graph_version, None if declared is None else list(declared))
    try:
        chosen = recipe if targets is None else recipe.with_targets(targets)
        with warnings.catch_warnings(record=True) as caught:
            prepared = chosen.prepare(
                remote="" if publisher is None else publisher.url, force_rebuild=force_rebuild
            )
        for item in caught:
            warnings.showwarning(item.message, item.category, item.filename, item.lineno)
    except Exception as error:  # the recipe's own failure: reported in its row
        traceback.print_exc()
        row.error = f"{type(error).__name__}: {error}"
        row.seconds = time.monotonic() - started
        return row
    row.outcome = BUILT if prepared.built else REUSED
    row.path = str(prepared.path)
    row.targets = _saved_targets(prepared.path) or row.targets
    if publisher is not None:
        remote_warnings = [item for item in caught if issubclass(item.category, RemoteCacheWarning)]
        warned = [str(item.message) for item in remote_warnings]
        try:
            row.published = publisher.publish(prepared.path, prepared.built, force_rebuild, warned)
        except (NotPublished, RemoteUnavailable, OSError, EngineCacheError) as error:
            row.error = f"publishing failed: {error}"
    row.seconds = time.monotonic() - started
    return row


def _load(spec: str, prog: str) -> list[EngineRecipe] | None:
    try:
        with contextlib.redirect_stdout(sys.stderr):  # stdout: the report
            return load_recipes(spec)
    except RecipeSpecError as error:
        raise UsageError(str(error)) from error
    except Exception as error:  # raised by the package while it was imported
        traceback.print_exc()
        print(f"{prog}: loading {spec} failed: {type(error).__name__}: {error}", file=sys.stderr)
        return None


def _build(args: list[str], prog: str) -> int:
    options = _parser(prog).parse_args(args)
    try:
        output = chosen_format(options, prog)
    except FormatError as error:
        raise UsageError(str(error)) from error
    targets = _targets(options.targets)
    publisher = None if options.push is None else _publisher(options.push)
    recipes = _load(options.spec, prog)
    if recipes is None:
        return EXIT_FAILURE
    rows = []
    for recipe in recipes:
        with contextlib.redirect_stdout(sys.stderr):  # stdout: the report
            row = _make(recipe, targets, publisher, options.force_rebuild)
        status = row.outcome + (f", published: {row.published}" if publisher else "")
        status += f" ({row.error})" if row.error else ""
        print(f"{prog}: {row.name} (graph_version {row.graph_version}): {status}", file=sys.stderr)
        rows.append(row)
    signed = None if publisher is None else publisher.signing is not None
    report = document(options.spec, None if publisher is None else publisher.url, signed, rows)
    if output == JSON:
        print_json(report)
    else:
        print(table(report, rows), end="", flush=True)
    return EXIT_SUCCESS if report["succeeded"] else EXIT_FAILURE


def main(args: list[str], prog: str) -> int:
    return run(prog, USAGE, lambda: _build(args, prog))

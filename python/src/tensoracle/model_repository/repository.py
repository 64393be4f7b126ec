"""A Triton model repository laid out from a deployment manifest: for each recipe, the folder
``OUT/<recipe>/`` with its ``config.pbtxt`` and, in the version folder ``1/``, the raw TensorRT
plan of each of the recipe's entries.

The manifest is read once by the C++ library (``_core.read_trusted_manifest``), trusted as
``open_deployed`` trusts it (the same verify key or trust policy, minimum version and cache
folder), and every entry is opened from the cache folder and verified as ``open_deployed``
verifies the entry it selects: its file against the manifest before a byte of it is used, then
its plan chunk by chunk, each chunk checked against the verified header before it is written
(``plan_file``).

A recipe is written whole or not at all: into a hidden folder in OUT, each plan into a temporary
renamed once every byte of it was checked, every file and folder flushed to the disk, the folder
renamed to ``OUT/<recipe>`` at the end (onto an empty folder of that name, if there is one). A
recipe is refused (``Refused``, naming the recipe, the entry and why), leaving nothing in OUT,
when ``layout`` refuses it, and when ``OUT/<recipe>`` already holds something other than what
would be written.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tensoracle.errors import EngineCacheError
from tensoracle.model_repository import model_folder
from tensoracle.model_repository.layout import (
    Refused,
    Served,
    check_folder_name,
    entry_where,
    layout,
)
from tensoracle.model_repository.plan_file import write_plan

VERSION = "1"
CONFIG = "config.pbtxt"


@dataclass(frozen=True)
class Written:
    """What was laid out for one recipe."""

    recipe: str
    folder: Path
    served: tuple[Served, ...]
    backend_version: str
    plugins: tuple[str, ...]  # SHA-256 of the plugin libraries the plans were built with
    unchanged: bool  # the folder already held exactly this


def _another_model(recipe: str, target: Path) -> Refused:
    return Refused(
        f"recipe {recipe!r}: {target} already holds another model (or another version of it); "
        "it was left as it is: remove it, or write the repository elsewhere"
    )


def write_recipe(trusted: Any, document: Mapping[str, Any], recipe: str, out: Path) -> Written:
    """Writes ``out/<recipe>`` (``out`` exists) whole, or raises Refused leaving nothing there."""
    check_folder_name(recipe)
    model = layout(trusted, document, recipe)
    target = out / recipe
    staging = Path(tempfile.mkdtemp(prefix=f".{recipe}.", suffix=".partial", dir=out))
    try:
        os.chmod(staging, model_folder.folder_mode())
        model_folder.write_file(staging / CONFIG, model.config.text())
        (staging / VERSION).mkdir()
        for one, engine in zip(model.served, model.engines, strict=True):
            try:
                write_plan(engine, staging / VERSION / one.plan_name)
            except EngineCacheError as error:  # a chunk that is not the verified one
                where = entry_where(recipe, document["entries"][one.index])
                raise Refused(f"{where}: {error}") from error
        model_folder.sync_folder(staging / VERSION)
        model_folder.sync_folder(staging)
        already_there = os.path.lexists(target) and not model_folder.is_empty_folder(target)
        if already_there and not model_folder.same_model(staging, target):
            raise _another_model(recipe, target)
        if not already_there:
            try:
                os.rename(staging, target)  # onto an empty folder too
            except OSError as error:  # something was put there meanwhile
                if error.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
                    raise _another_model(recipe, target) from error
                raise
            model_folder.sync_folder(out)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return Written(
        recipe, target, model.served, model.backend_version, model.plugins, already_there
    )

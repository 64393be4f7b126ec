"""A Triton model repository laid out from a deployment manifest: for each recipe, the folder
``OUT/<recipe>/`` with its ``config.pbtxt`` and, in the version folder ``1/``, the raw TensorRT
plan of each of the recipe's entries.

The manifest is read once by the C++ library (``_core.read_trusted_manifest``), trusted as
``open_deployed`` trusts it (the same verify key or trust policy, minimum version and cache
folder), and every entry is opened from the cache folder and verified as ``open_deployed``
verifies the entry it selects: its file against the manifest before a byte of it is used, then
its plan chunk by chunk, each chunk checked against the verified header before it is written.

A recipe is written whole or not at all: into a hidden folder in OUT, each plan into a temporary
renamed once every byte of it was checked, the folder renamed to ``OUT/<recipe>`` at the end. A
recipe is refused (``Refused``, naming the recipe, the entry and why), leaving nothing in OUT,
when an entry is a TensorRT-RTX engine (Triton's ``tensorrt_plan`` platform runs TensorRT only),
is not the manifest's, records no IO or an IO Triton cannot declare, when two entries would be
served to the same compute capability or were built by different TensorRT versions, and when
``OUT/<recipe>`` already holds something other than what would be written.
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tensoracle import _core
from tensoracle.errors import EngineCacheError
from tensoracle.model_repository.model_config import DATA_TYPES, ModelConfig, Tensor

VERSION = "1"
CONFIG = "config.pbtxt"
# How much of the plan one read asks for: the reader hands on at most the rest of one 4 MiB
# chunk, checked.
READ_BYTES = 4 << 20

TENSORRT = "tensorrt"
SAME_COMPUTE_CAPABILITY = "same_compute_capability"
AMPERE_PLUS = "ampere_plus"
DEFAULT = "default"  # what an ampere_plus entry serves: every capability not mapped to another


class Refused(Exception):
    """A recipe that cannot be written; the message names the recipe, the entry and why."""


@dataclass(frozen=True)
class Served:
    """One entry and the compute capabilities it is served to ("default" for Ampere on)."""

    index: int  # in the manifest's entries
    file_name: str
    plan_name: str
    capabilities: tuple[str, ...]


@dataclass(frozen=True)
class Written:
    """What was laid out for one recipe."""

    recipe: str
    folder: Path
    served: tuple[Served, ...]
    backend_version: str
    plugins: tuple[str, ...]  # SHA-256 of the plugin libraries the plans were built with
    unchanged: bool  # the folder already held exactly this


def recipes_of(document: Mapping[str, Any]) -> list[str]:
    """The manifest's recipes, in the order of their first entries."""
    return list(dict.fromkeys(str(entry["recipe"]) for entry in document["entries"]))


def plan_name(file_name: str) -> str:
    """The plan's file name in the version folder: the entry's, the raw plan's suffix."""
    return file_name.removesuffix(".engine") + ".plan"


def check_folder_name(recipe: str) -> None:
    """Refuses a recipe name that is not one plain folder name (Triton's model name is its
    folder's)."""
    if (
        not recipe
        or recipe.startswith(".")
        or any(separator in recipe for separator in ("/", "\\", "\0"))
        or not _core.is_safe_relative_path(recipe)
    ):
        raise Refused(
            f"recipe {recipe!r}: its name cannot be a model folder's name in the repository "
            "(empty, starting with '.', or holding a path separator)"
        )


def _entry_where(recipe: str, entry: Mapping[str, Any]) -> str:
    return f"recipe {recipe!r}: entry {entry['file_name']}"


def capabilities(recipe: str, entry: Mapping[str, Any], conditions: Mapping[str, Any]) -> list[str]:
    """The compute capabilities Triton serves the entry's plan to, by its backend and hardware
    compatibility level; refuses a TensorRT-RTX entry (Triton's tensorrt_plan platform runs
    TensorRT only)."""
    where = _entry_where(recipe, entry)
    if entry["backend"] != TENSORRT:
        raise Refused(
            f"{where}: built by {entry['backend']} {entry['backend_version']}; Triton's "
            f"tensorrt_plan platform deserializes TensorRT plans only (a TensorRT-RTX engine "
            "runs in an application through tensoracle's runtime, not in Triton)"
        )
    level = conditions.get("hardware_compatibility")
    if level == AMPERE_PLUS:
        return [DEFAULT]
    gpu = conditions.get("gpu")
    capability = gpu.get("compute_capability") if isinstance(gpu, Mapping) else None
    if level not in (None, SAME_COMPUTE_CAPABILITY) or not isinstance(capability, str):
        raise Refused(
            f"{where}: its conditions record hardware_compatibility={level!r} and gpu={gpu!r}; "
            "no compute capability to serve it to"
        )
    return [capability]


def tensors(
    recipe: str, entry: Mapping[str, Any], io: Any
) -> tuple[tuple[Tensor, ...], tuple[Tensor, ...]]:
    """The entry's inputs and outputs as config.pbtxt declares them; refuses an entry without
    an IO signature, a tensor of a type Triton has none for, or one not in the linear format."""
    where = _entry_where(recipe, entry)
    if not isinstance(io, Mapping) or not io.get("tensors"):
        raise Refused(f"{where}: the manifest records no IO signature to declare in config.pbtxt")
    declared: dict[str, list[Tensor]] = {"INPUT": [], "OUTPUT": []}
    for tensor in io["tensors"]:
        dtype = tensor["dtype"]
        if dtype not in DATA_TYPES:
            raise Refused(
                f"{where}: tensor {tensor['name']!r} is {dtype}, which Triton has no data_type "
                f"for (it has one for {', '.join(sorted(DATA_TYPES))})"
            )
        if tensor.get("format", "LINEAR") != "LINEAR":
            raise Refused(
                f"{where}: tensor {tensor['name']!r} is in the {tensor['format']} format; Triton "
                "passes tensors in the linear format"
            )
        declared[tensor["mode"]].append(
            Tensor(tensor["name"], DATA_TYPES[dtype], tuple(int(dim) for dim in tensor["shape"]))
        )
    return tuple(declared["INPUT"]), tuple(declared["OUTPUT"])


def described(capability: str) -> str:
    if capability == DEFAULT:
        return "every GPU from Ampere on (default_model_filename)"
    return f"compute capability {capability}"


@dataclass(frozen=True)
class _Layout:
    """A recipe's model as it will be written: its config and each verified entry's reader."""

    config: ModelConfig
    served: tuple[Served, ...]
    readers: tuple[Any, ...]  # _core.DeployedEngine of each served entry, opened streamed
    backend_version: str
    plugins: tuple[str, ...]


def _layout(trusted: Any, document: Mapping[str, Any], recipe: str) -> _Layout:
    """The recipe's model, judged from the manifest first (nothing is opened for a recipe that
    cannot be served), then from each entry opened and verified against it."""
    indexed = [(i, e) for i, e in enumerate(document["entries"]) if e["recipe"] == recipe]
    served: list[Served] = []
    owner: dict[str, str] = {}
    plugins: set[str] = set()
    for index, entry in indexed:
        conditions = json.loads(entry["conditions_json"])
        claimed = capabilities(recipe, entry, conditions)
        for capability in claimed:
            if capability in owner:
                raise Refused(
                    f"recipe {recipe!r}: entries {owner[capability]} and {entry['file_name']} "
                    f"both run on {described(capability)}, and Triton chooses a plan by compute "
                    "capability alone"
                )
            owner[capability] = entry["file_name"]
        plugins.update(str(digest) for digest in conditions.get("plugins") or ())
        served.append(
            Served(index, entry["file_name"], plan_name(entry["file_name"]), tuple(claimed))
        )
    versions = sorted({str(entry["backend_version"]) for _index, entry in indexed})
    if len(versions) > 1:
        raise Refused(
            f"recipe {recipe!r}: its entries were built by TensorRT {' and '.join(versions)}, and "
            "a Triton server runs one TensorRT version"
        )
    readers = []
    declared: tuple[tuple[Tensor, ...], tuple[Tensor, ...]] | None = None
    first = ""
    for one in served:
        entry = document["entries"][one.index]
        try:
            reader = trusted.open(one.index, True)
        except (ValueError, OSError) as error:  # not the manifest's, missing, unreadable
            raise Refused(f"{_entry_where(recipe, entry)}: {error}") from error
        io = tensors(recipe, entry, json.loads(reader.io_json))
        if declared is None:
            declared, first = io, one.file_name
        elif io != declared:
            raise Refused(
                f"recipe {recipe!r}: entries {first} and {one.file_name} record different inputs "
                "or outputs, and one config.pbtxt declares them for every plan"
            )
        readers.append(reader)
    assert declared is not None  # a recipe of the manifest has an entry
    config = ModelConfig(
        name=recipe,
        inputs=declared[0],
        outputs=declared[1],
        cc_model_filenames={
            capability: one.plan_name
            for one in served
            for capability in one.capabilities
            if capability != DEFAULT
        },
        default_model_filename=next(
            (one.plan_name for one in served if DEFAULT in one.capabilities), None
        ),
    )
    return _Layout(config, tuple(served), tuple(readers), versions[0], tuple(sorted(plugins)))


def _write_plan(reader: Any, path: Path) -> None:
    """The verified plan into ``path``: each piece checked before it is written, into a
    temporary renamed once the whole plan was checked."""
    temporary = path.with_name(f".{path.name}.partial")
    with open(temporary, "xb") as file:
        offset = 0
        while piece := reader.read_plan(offset, READ_BYTES):
            file.write(piece)
            offset += len(piece)
        reader.check_rest()  # nothing is left unread; a reader that stopped short would say so
        if offset != reader.plan_size or not reader.checked_whole:
            raise OSError(f"{reader.path}: {offset} of {reader.plan_size} plan bytes were read")
        file.flush()
        os.fsync(file.fileno())
    os.rename(temporary, path)


def _regular_files(root: Path) -> dict[str, Path] | None:
    """Every file under ``root`` by its relative path; None where something is not a regular
    file or folder (a link, say), which makes the folder another model than any written."""
    if root.is_symlink() or not root.is_dir():
        return None
    found = {}
    for folder, folders, files in os.walk(root):
        for name in (*folders, *files):
            path = Path(folder) / name
            if path.is_symlink() or not (path.is_dir() or path.is_file()):
                return None
            if name in files:
                found[path.relative_to(root).as_posix()] = path
    return found


def _same_model(written: Path, existing: Path) -> bool:
    ours, theirs = _regular_files(written), _regular_files(existing)
    if ours is None or theirs is None or set(ours) != set(theirs):
        return False
    return all(filecmp.cmp(ours[name], theirs[name], shallow=False) for name in ours)


def _folder_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o777 & ~mask


def write_recipe(trusted: Any, document: Mapping[str, Any], recipe: str, out: Path) -> Written:
    """Writes ``out/<recipe>`` (``out`` exists) whole, or raises Refused leaving nothing there."""
    check_folder_name(recipe)
    layout = _layout(trusted, document, recipe)
    target = out / recipe
    staging = Path(tempfile.mkdtemp(prefix=f".{recipe}.", suffix=".partial", dir=out))
    try:
        os.chmod(staging, _folder_mode())
        (staging / CONFIG).write_text(layout.config.text(), encoding="utf-8")
        (staging / VERSION).mkdir()
        for one, reader in zip(layout.served, layout.readers, strict=True):
            try:
                _write_plan(reader, staging / VERSION / one.plan_name)
            except EngineCacheError as error:  # a chunk that is not the verified one
                where = _entry_where(recipe, document["entries"][one.index])
                raise Refused(f"{where}: {error}") from error
        unchanged = os.path.lexists(target)
        if unchanged and not _same_model(staging, target):
            raise Refused(
                f"recipe {recipe!r}: {target} already holds another model (or another version of "
                "it); it was left as it is: remove it, or write the repository elsewhere"
            )
        if not unchanged:
            os.rename(staging, target)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return Written(recipe, target, layout.served, layout.backend_version, layout.plugins, unchanged)


def needs(written: Sequence[Written]) -> list[str]:
    """What a Triton server needs to load the models written, beyond the repository."""
    lines = []
    versions = sorted({one.backend_version for one in written})
    if versions:
        lines.append(
            f"the plans are TensorRT {' and '.join(versions)} plans: serve them with a Triton "
            "release whose TensorRT is that version"
        )
    plugins = sorted({digest for one in written for digest in one.plugins})
    if plugins:
        lines.append(
            "the plans use plugin libraries (SHA-256 "
            + ", ".join(plugins)
            + "): start tritonserver with "
            '--backend-config=tensorrt,plugins="/path/a.so;/path/b.so" or with LD_PRELOAD '
            "naming them"
        )
    return lines

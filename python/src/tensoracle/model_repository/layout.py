"""A recipe's model as ``deploy triton`` lays it out, judged from the manifest and from each of
its entries opened and verified: which plan Triton serves to which compute capabilities, and the
inputs and outputs ``config.pbtxt`` declares. A recipe Triton could not serve as written is
``Refused``, naming the recipe, the entry or tensor, and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tensoracle import _core
from tensoracle.model_repository.model_config import DATA_TYPES, ModelConfig, Tensor

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
class Layout:
    """A recipe's model as it will be written: its config and each verified entry, opened."""

    config: ModelConfig
    served: tuple[Served, ...]
    engines: tuple[Any, ...]  # _core.DeployedEngine of each served entry, opened streamed
    backend_version: str
    plugins: tuple[str, ...]


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


def entry_where(recipe: str, entry: Mapping[str, Any]) -> str:
    return f"recipe {recipe!r}: entry {entry['file_name']}"


def capabilities(recipe: str, entry: Mapping[str, Any], conditions: Mapping[str, Any]) -> list[str]:
    """The compute capabilities Triton serves the entry's plan to, by its backend and hardware
    compatibility level; refuses a TensorRT-RTX entry (Triton's tensorrt_plan platform runs
    TensorRT only)."""
    where = entry_where(recipe, entry)
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


def _declared(where: str, tensor: Mapping[str, Any]) -> Tensor:
    """One tensor as config.pbtxt declares it, or Refused where Triton would refuse the file or
    the plan."""
    name, dtype = tensor["name"], tensor["dtype"]
    if dtype not in DATA_TYPES:
        raise Refused(
            f"{where}: tensor {name!r} is {dtype}, which Triton has no data_type for (it has "
            f"one for {', '.join(sorted(DATA_TYPES))})"
        )
    if tensor.get("format", "LINEAR") != "LINEAR":
        raise Refused(
            f"{where}: tensor {name!r} is in the {tensor['format']} format; Triton passes "
            "tensors in the linear format"
        )
    if tensor.get("location", "DEVICE") != "DEVICE":
        raise Refused(
            f"{where}: tensor {name!r} is in {tensor['location']} memory (a shape tensor); "
            "Triton needs it declared with is_shape_tensor, which deploy triton does not write"
        )
    dims = tuple(int(dim) for dim in tensor["shape"])
    if not dims:
        raise Refused(
            f"{where}: tensor {name!r} is a scalar (no dimensions); with max_batch_size 0 "
            "Triton refuses a config.pbtxt whose dims are empty"
        )
    if 0 in dims:
        raise Refused(
            f"{where}: tensor {name!r} has the shape {list(dims)}, with a dimension of 0; "
            "Triton accepts only dimensions of at least 1, or -1 for a dynamic one"
        )
    return Tensor(name, DATA_TYPES[dtype], dims)


def tensors(
    recipe: str, entry: Mapping[str, Any], io: Any
) -> tuple[tuple[Tensor, ...], tuple[Tensor, ...]]:
    """The entry's inputs and outputs as config.pbtxt declares them; refuses an entry without
    an IO signature and a tensor Triton could not be given (``_declared``)."""
    where = entry_where(recipe, entry)
    if not isinstance(io, Mapping) or not io.get("tensors"):
        raise Refused(f"{where}: the manifest records no IO signature to declare in config.pbtxt")
    declared: dict[str, list[Tensor]] = {"INPUT": [], "OUTPUT": []}
    for tensor in io["tensors"]:
        declared[tensor["mode"]].append(_declared(where, tensor))
    return tuple(declared["INPUT"]), tuple(declared["OUTPUT"])


def described(capability: str) -> str:
    if capability == DEFAULT:
        return "every GPU of compute capability 8.0 or newer (default_model_filename)"
    return f"compute capability {capability}"


def layout(trusted: Any, document: Mapping[str, Any], recipe: str) -> Layout:
    """The recipe's model, judged from the manifest first (nothing is opened for a recipe that
    cannot be served), then from each entry opened and verified against it."""
    indexed = [(i, e) for i, e in enumerate(document["entries"]) if e["recipe"] == recipe]
    served: list[Served] = []
    owner: dict[str, str] = {}
    plugins: set[str] = set()
    for index, entry in indexed:
        conditions = entry["conditions"]
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
    engines = []
    declared: tuple[tuple[Tensor, ...], tuple[Tensor, ...]] | None = None
    first = ""
    for one in served:
        entry = document["entries"][one.index]
        try:
            engine = trusted.open(one.index, True)
        except (ValueError, OSError) as error:  # not the manifest's, missing, unreadable
            raise Refused(f"{entry_where(recipe, entry)}: {error}") from error
        io = tensors(recipe, entry, engine.io)
        if declared is None:
            declared, first = io, one.file_name
        elif io != declared:
            raise Refused(
                f"recipe {recipe!r}: entries {first} and {one.file_name} record different inputs "
                "or outputs, and one config.pbtxt declares them for every plan"
            )
        engines.append(engine)
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
    return Layout(config, tuple(served), tuple(engines), versions[0], tuple(sorted(plugins)))

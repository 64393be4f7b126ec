"""The open protocol: the one path from a graph and its declaration to a saved engine.

``obtain`` is called by ``open_engine`` and ``prepare_engine`` (``tensoracle.engine.open``),
which differ only in what they return. For one call:

1. Check every argument, once; load the plugins (a missing or changed library is reported
   before any cached plan is opened); digest the weights; plan the build targets for this
   device; make the identity from these conditions (``tensoracle.cache.identity``), which
   records what the engine can run on, not the machine it is built on
   (``tensoracle.cache.compatibility``). For ``open_engine`` on a machine with a GPU, an
   identity whose engine could not run on that GPU is refused here (``EngineTargetError``),
   before anything is read or built.
2. Take the identity's shared lock and read the entry. A hit is returned, its header's IO
   checked against the declared ``io``. Where the engine will be deserialized here (a GPU is
   present, ``open_engine``) and the backend can judge the plan's header (TensorRT-RTX's
   engine validity), an entry that the backend says cannot run on this device is a miss, with
   the reason logged and recorded as the rebuild reason.
3. On a miss (or with ``force_rebuild``) take the exclusive lock and look again (unless
   forced); on a second miss the remote tier, where one is configured
   (``tensoracle.cache.remote.fleet``), fetches the entry (judged as in step 2) or takes the
   fleet's build lease.
4. Build with the targets planned in step 1 (the graph is called only here), check the built
   IO against ``io`` before anything is saved, save through the store's atomic save with the
   rebuild reason (``tensoracle.cache.rebuild``), and publish to the remote tier.

The C++ core provides the store's primitives (locks, read, atomic save, entry paths, the nearest
entry of a name); the protocol is orchestrated here, where the TensorRT builders and the object
store clients are.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from tensoracle import _core, gpu
from tensoracle.cache import compatibility, encryption, identity, rebuild
from tensoracle.cache.remote import fleet
from tensoracle.engine import log
from tensoracle.engine.backends import Backend, backend
from tensoracle.engine.build import Graph, build_plan, check_arguments
from tensoracle.engine.declaration import EngineBuild
from tensoracle.engine.field_checks import check_text
from tensoracle.engine.io import EngineIO, check_io
from tensoracle.engine.plugins import load_plugins
from tensoracle.errors import EngineTargetError

_logger = logging.getLogger("tensoracle.cache")


def _version() -> str:
    try:
        return metadata.version("tensoracle")
    except metadata.PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True)
class Obtained:
    """An engine obtained through the cache: its file, its plan, and how it was obtained."""

    chosen: Backend
    path: Path
    plan: Any  # a read-only buffer, not copied; the decrypted bytes of an encrypted entry opened
    # with a key; None for an encrypted entry whose plan was not needed (prepare_engine)
    keep: Any  # owner of the plan's memory (a SavedEngine mapping, a download, or IHostMemory)
    references: dict[str, Any]  # the header's recorded references
    built: bool  # True when this call built and saved the engine

    @property
    def rebuild_reason(self) -> str | None:
        """Why this entry was built although entries of its name were saved, or None."""
        return rebuild.describe(self.references.get("rebuild_reason"))


@dataclass(frozen=True)
class _Arguments:
    weights: list[Path]
    progress: str | Callable[..., Any]  # the resolved progress mode


def _check_arguments(
    graph: Any,
    declaration: Any,
    name: Any,
    graph_version: Any,
    weights: Any,
    io: Any,
    force_rebuild: Any,
    progress: Any,
) -> _Arguments:
    mode = check_arguments(graph, declaration, progress)
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, not {name!r}")
    check_text("name", name)
    if not isinstance(graph_version, str) or not graph_version:
        raise ValueError(f"graph_version must be a non-empty string, not {graph_version!r}")
    check_text("graph_version", graph_version)
    if isinstance(weights, str | bytes | os.PathLike) or not isinstance(weights, Sequence):
        raise ValueError(f"weights must be a sequence of paths, not {weights!r}")
    paths: list[Path] = []
    for entry in weights:
        if not isinstance(entry, str | os.PathLike) or not os.fspath(entry):
            raise ValueError(f"weights holds {entry!r}, which is not a path")
        check_text("weights path", os.fsdecode(entry))
        paths.append(Path(os.fspath(entry)).absolute())
    if not isinstance(io, EngineIO):
        raise ValueError(f"io must be an EngineIO, not {io!r}")
    if not isinstance(force_rebuild, bool):
        raise ValueError(f"force_rebuild must be True or False, not {force_rebuild!r}")
    return _Arguments(paths, mode)


def obtain(
    graph: Graph,
    declaration: EngineBuild,
    *,
    name: str,
    graph_version: str,
    weights: Sequence[str | os.PathLike[str]],
    io: EngineIO,
    plugins: Iterable[str | os.PathLike[str]],
    force_rebuild: bool,
    logger: Any,
    progress: Any,
    remote: str | None,
    for_this_device: bool = False,
    encrypt_to: Sequence[str | os.PathLike[str]] = (),
    decrypt_key: str | os.PathLike[str] | None = None,
) -> Obtained:
    """The saved engine for these conditions, built and saved on a miss (see the module's
    docstring). A fresh build whose IO differs from ``io`` raises EngineIOError before anything
    is saved or published; a saved entry whose header records other IO raises it too.

    ``for_this_device`` (``open_engine``): the engine is to run on this machine's GPU, so an
    identity it could not run on raises EngineTargetError first, and saved entries the backend
    says cannot run on this device are misses (``prepare_engine`` prepares for other GPUs).

    ``encrypt_to`` and ``decrypt_key``: see ``tensoracle.cache.encryption``. A saved entry is
    reused for ``encrypt_to`` only when it is sealed for exactly those keys; ``decrypt_key``
    opens an encrypted one (the plan is needed only ``for_this_device``)."""
    checked = _check_arguments(
        graph, declaration, name, graph_version, weights, io, force_rebuild, progress
    )
    sealed = encryption.sealing(encrypt_to)
    key_to_open = encryption.check_decrypt_key(decrypt_key)
    chosen = backend()
    plugin_digests = load_plugins(plugins, chosen, logger)
    store = _core.Store(_core.default_cache_directory())
    weight_digests = [
        _core.weight_digest(store.directory, str(path), force_rebuild)[0]
        for path in checked.weights
    ]
    device = gpu.properties()
    chosen.adapter.check_hardware_compatibility(declaration.settings.hardware_compatibility)
    targets = chosen.adapter.planned_targets(device, declaration.settings.targets)
    conditions = identity.conditions(
        name=name,
        graph_version=graph_version,
        chosen=chosen,
        declaration=declaration,
        weights=weight_digests,
        plugins=plugin_digests,
        gpu=device,
        targets=targets,
    )
    text = identity.to_json(conditions)
    identity.check_conditions_size(text, conditions)
    key = _core.make_identity(conditions)

    if for_this_device and device is not None:
        _refuse_unrunnable(chosen, conditions, device)
    judge_here = for_this_device and chosen.adapter.HEADER_VALIDITY and gpu.absent_reason() is None
    unusable: str | None = None  # why a saved entry cannot run on this device
    unsealed: set[str] = set()  # the entries already said not to be sealed for encrypt_to

    def reused(saved: Any, references: dict[str, Any]) -> Obtained | None:
        nonlocal unusable
        path = Path(saved.path)
        if sealed is not None and (mismatch := sealed.mismatch(saved)) is not None:
            if str(path) not in unsealed:
                unsealed.add(str(path))
                _logger.warning(
                    "the saved engine '%s' is not sealed for encrypt_to (%s); building it here "
                    "and saving it encrypted",
                    path,
                    mismatch,
                )
            return None
        plan = encryption.plan_of(saved, key_to_open, for_this_device)
        found = Obtained(chosen, path, plan, saved, references, built=False)
        if judge_here:
            unusable = _cannot_run_here(chosen, found)
            if unusable is not None:
                _logger.warning(
                    "the saved engine '%s' cannot run on this device (%s); building it here",
                    found.path,
                    unusable,
                )
                return None
        signature = found.references.get("io")
        if isinstance(signature, dict):
            check_io(io, declaration, signature, str(found.path), "saved header of")
        return found

    if not force_rebuild:
        with store.lock(key, False):
            saved = store.read(key)
        if saved is not None and (usable := reused(saved, saved.references)) is not None:
            return usable
    # On a local miss the remote tier (if configured) fetches, or leases, builds and publishes.
    with store.lock(key, True), fleet.session(remote, store, key) as shared:
        if not force_rebuild and unusable is None:
            saved = store.read(key)
            if saved is not None and (usable := reused(saved, saved.references)) is not None:
                return usable
        if not force_rebuild and unusable is None:
            fetched = shared.fetch()
            if fetched is not None:
                usable = reused(fetched.owner, fetched.references)
                if usable is not None:
                    return usable
        encryption.refuse_plain_build(name, key_to_open, sealed)
        result = build_plan(chosen, graph, declaration, targets, logger, checked.progress)
        check_io(io, declaration, result.signature, store.entry_path(key), "built engine")
        references = {
            "workspace_limit": declaration.settings.workspace_limit,
            "shape_tensor_outputs": result.shape_tensor_outputs,
            "io": result.signature,
            "targets": result.targets,
            "tensoracle_version": _version(),
            "built_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "build_milliseconds": result.milliseconds,
        }
        reason = (
            rebuild.find(store.directory, key.conditions, name)
            if unusable is None
            else rebuild.cannot_run_here(store.entry_path(key), unusable)
        )
        if reason is not None:
            references["rebuild_reason"] = reason
        path = store.save(
            key, references, memoryview(result.plan), () if sealed is None else sealed.keys
        )
        shared.publish(path)
    return Obtained(chosen, Path(path), result.plan, result.plan, references, built=True)


def _refuse_unrunnable(chosen: Backend, conditions: dict[str, Any], device: dict[str, Any]) -> None:
    """EngineTargetError when the identity's engine could not run on ``device``."""
    reason = compatibility.cannot_run(conditions, device)
    if reason is None:
        return
    local = compatibility.target_of(device)
    raise EngineTargetError(
        f"open_engine will not build or read {conditions['name']!r} here: {reason}. "
        + chosen.adapter.target_remedy(local)
    )


def _cannot_run_here(chosen: Backend, found: Obtained) -> str | None:
    """The backend's reason why a saved plan cannot run on this device, judged from its header
    without deserializing it (None when it can, or when the backend cannot tell, or when the
    reason is damage: deserialization then reports it as CorruptEngineError)."""
    trt = chosen.module
    runtime = trt.Runtime(log.trt_logger(chosen))
    problem: str | None = chosen.adapter.validity_problem(trt, runtime, found.plan)
    if problem is None or any(word in problem for word in chosen.adapter.DAMAGE_DIAGNOSTICS):
        return None
    return problem

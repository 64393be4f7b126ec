"""Opening engines through the cache: ``open_engine``, ``prepare_engine``, ``EngineHandle``.

Protocol per identity (the same as the C++ store's users): take the shared lock and read the
entry; on a miss (or with ``force_rebuild``) take the exclusive lock, look again (unless
forced), then build and save. The graph is called only when building.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from tensoracle import _core, gpu, identity, log, rebuild
from tensoracle.backends import Backend, backend
from tensoracle.build import Graph, build_plan, check_arguments
from tensoracle.declaration import EngineBuild
from tensoracle.errors import CorruptEngineError
from tensoracle.field_checks import check_conditions_size, check_text
from tensoracle.io import EngineIO, check_io, signature_from_engine
from tensoracle.plugins import load_plugins
from tensoracle.remote import fleet

# Backend validity diagnostics that mean the file itself is unusable, not this device.
_DAMAGE_DIAGNOSTICS = ("MALFORMED_ENGINE", "VERSION_MISMATCH")


def _version() -> str:
    try:
        return metadata.version("tensoracle")
    except metadata.PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True)
class EngineHandle:
    """A deserialized engine, the runtime that owns it, and the file it came from.

    Keep the handle alive while using ``engine``. Construct one yourself to wrap an engine built
    or deserialized elsewhere (``EngineHandle(engine, runtime, path)``), then call
    ``create_execution()``. ``open_engine`` returns a ``SavedEngineHandle``, which is an
    ``EngineHandle`` that also knows how the engine was obtained.
    """

    engine: Any
    runtime: Any
    path: Path
    _shape_tensor_outputs: tuple[str, ...] = field(default=(), repr=False)

    @property
    def shape_tensor_outputs(self) -> list[str]:
        """Outputs marked as shape tensors (an execution unit warns about them)."""
        return list(self._shape_tensor_outputs)

    def create_execution(self) -> Any:
        """A new ``tensoracle.EngineExecution`` on this handle's engine."""
        from tensoracle.execution import EngineExecution

        return EngineExecution(self)


class SavedEngineHandle(EngineHandle):
    """The handle ``open_engine`` returns: an ``EngineHandle`` for a saved engine, deserialized
    on first use of ``engine``, with its path, plan, backend, recorded references, and whether
    this call built it.

    Deserialization needs a CUDA device: where none is present ``open_engine`` still builds,
    saves and checks IO, and ``engine`` raises RuntimeError saying so. After deserialization the
    plan's file mapping is released (``plan`` becomes None) so that the saved file is not held
    open. Handles compare by identity.
    """

    def __init__(
        self,
        *,
        chosen: Backend,
        path: Path,
        plan: Any,
        keep: Any,
        io: EngineIO,
        declaration: EngineBuild,
        references: dict[str, Any],
        built: bool,
        logger: Any,
    ) -> None:
        shape_outputs = tuple(references.get("shape_tensor_outputs", ()))
        for name, value in (
            ("_backend", chosen),
            ("_path", path),
            ("_plan", plan),
            ("_keep", keep),  # owner of the plan's memory (a SavedEngine mapping or IHostMemory)
            ("_io", io),
            ("_declaration", declaration),
            ("_references", references),
            ("_built", built),
            ("_logger", logger),
            ("_lock", threading.Lock()),
            ("_engine", None),
            ("_runtime", chosen.module.Runtime(log.trt_logger(chosen))),
            ("_shape_tensor_outputs", shape_outputs),
        ):
            object.__setattr__(self, name, value)

    __eq__ = object.__eq__
    __hash__ = object.__hash__

    @property  # type: ignore[override]
    def path(self) -> Path:
        return self._path

    @property
    def backend(self) -> Backend:
        return self._backend

    @property
    def built(self) -> bool:
        """True when this call built and saved the engine, False when it reused a saved one."""
        return self._built

    @property
    def rebuild_reason(self) -> str | None:
        """Why this entry was built although entries of its name were saved (the differing
        conditions, as recorded in its header), or None."""
        return rebuild.describe(self._references.get("rebuild_reason"))

    @property
    def io(self) -> EngineIO:
        return self._io

    @property
    def declaration(self) -> EngineBuild:
        return self._declaration

    @property
    def references(self) -> dict[str, Any]:
        """The header's recorded references (workspace limit, shape-tensor outputs, IO, ...)."""
        return self._references

    @property
    def plan(self) -> memoryview | None:
        """The serialized plan (read-only, not copied) until the engine is deserialized."""
        with self._lock:
            return None if self._plan is None else memoryview(self._plan)

    @property  # type: ignore[override]
    def runtime(self) -> Any:
        return self._runtime

    @property  # type: ignore[override]
    def engine(self) -> Any:
        """The deserialized ``ICudaEngine`` (deserialized and IO-checked on first access)."""
        with self._lock:
            if self._engine is None:
                object.__setattr__(self, "_engine", self._deserialize())
                object.__setattr__(self, "_plan", None)
                object.__setattr__(self, "_keep", None)
            return self._engine

    def _deserialize(self) -> Any:
        trt = self._backend.module
        missing = gpu.absent_reason()
        with log.capture(self._logger) as errors:
            if missing is None:
                problem = self._backend.adapter.validity_problem(trt, self._runtime, self._plan)
                if problem is not None:
                    text = (
                        f"{self._backend.name} {self._backend.version} reports the engine "
                        f"'{self._path}' {problem}"
                    )
                    if any(word in problem for word in _DAMAGE_DIAGNOSTICS):
                        raise CorruptEngineError(text)
                    raise RuntimeError(f"{text}: it cannot run on this device")
            engine = self._runtime.deserialize_cuda_engine(self._plan)
        if engine is None:
            if missing is not None:
                raise RuntimeError(
                    f"deserializing the engine '{self._path}' needs a CUDA device ({missing}); "
                    f"{self._backend.name} said: {log.describe(errors)}"
                )
            raise CorruptEngineError(
                f"{self._backend.name} {self._backend.version} cannot deserialize the plan in "
                f"'{self._path}': {log.describe(errors)}. Check that plugins= passes every "
                "plugin library the engine uses"
            )
        check_io(
            self._io,
            self._declaration,
            signature_from_engine(trt, engine),
            str(self._path),
            "deserialized engine",
        )
        return engine

    def __repr__(self) -> str:
        state = "deserialized" if self._engine is not None else "not deserialized"
        return f"SavedEngineHandle(path={str(self._path)!r}, backend={self._backend!r}, {state})"


@dataclass(frozen=True)
class PreparedEngine:
    """What ``prepare_engine`` did: the saved file, and whether this call built it."""

    path: Path
    built: bool
    rebuild_reason: str | None = None


@dataclass(frozen=True)
class _Request:
    chosen: Backend
    store: Any
    identity: Any


def _check_open_arguments(
    graph: Any,
    declaration: Any,
    name: Any,
    graph_version: Any,
    weights: Any,
    io: Any,
    force_rebuild: Any,
) -> list[Path]:
    check_arguments(graph, declaration)
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
    return paths


def _request(
    declaration: EngineBuild,
    name: str,
    graph_version: str,
    weights: list[Path],
    plugins: Iterable[Any],
    force_rebuild: bool,
    logger: Any,
) -> _Request:
    chosen = backend()
    # Plugins first: a missing or changed library is reported before any cached plan is opened.
    plugin_digests = load_plugins(plugins, chosen, logger)
    store = _core.Store(_core.default_cache_directory())
    weight_digests = [
        _core.weight_digest(store.directory, str(path), force_rebuild)[0] for path in weights
    ]
    device = gpu.properties()
    conditions = identity.conditions(
        name=name,
        graph_version=graph_version,
        chosen=chosen,
        declaration=declaration,
        weights=weight_digests,
        plugins=plugin_digests,
        gpu=device,
        targets=chosen.adapter.planned_targets(device, declaration.settings.targets),
    )
    text = identity.to_json(conditions)
    check_conditions_size(text, conditions)
    return _Request(chosen, store, _core.make_identity(text))


def _obtain(
    request: _Request,
    graph: Graph,
    declaration: EngineBuild,
    io: EngineIO,
    force_rebuild: bool,
    logger: Any,
    progress: Any = None,
    remote: str | None = None,
) -> tuple[Path, Any, Any, dict[str, Any], bool]:
    """Returns (path, plan buffer, owner of its memory, references, built). A fresh build whose
    IO differs from ``io`` raises EngineIOError before anything is saved or published."""
    store, key = request.store, request.identity
    if not force_rebuild:
        with store.lock(key, False):
            saved = store.read(key)
        if saved is not None:
            return Path(saved.path), saved.plan, saved, json.loads(saved.references_json), False
    # On a local miss the remote tier (if configured) fetches, or leases, builds and publishes.
    with store.lock(key, True), fleet.session(remote, store, key) as shared:
        if not force_rebuild:
            saved = store.read(key)
            if saved is not None:
                references = json.loads(saved.references_json)
                return Path(saved.path), saved.plan, saved, references, False
            fetched = shared.fetch()
            if fetched is not None:
                return fetched.path, fetched.plan, fetched.owner, fetched.references, False
        result = build_plan(
            request.chosen, graph, declaration, list(key_targets(key)), logger, progress
        )
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
        reason = rebuild.find(store.directory, key.conditions_json)
        if reason is not None:
            references["rebuild_reason"] = reason
        path = store.save(key, identity.to_json(references), memoryview(result.plan))
        shared.publish(path)
    return Path(path), result.plan, result.plan, references, True


def key_targets(key: Any) -> list[str]:
    """The build targets recorded in an identity's conditions."""
    return list(json.loads(key.conditions_json)["targets"])


def _check_header_io(
    io: EngineIO, declaration: EngineBuild, references: dict[str, Any], path: Path
) -> None:
    signature = references.get("io")
    if isinstance(signature, dict):
        check_io(io, declaration, signature, str(path), "saved header of")


def open_engine(
    graph: Graph,
    declaration: EngineBuild,
    *,
    name: str,
    graph_version: str,
    weights: Sequence[str | os.PathLike[str]],
    io: EngineIO,
    plugins: Iterable[str | os.PathLike[str]] = (),
    force_rebuild: bool = False,
    logger: Any = None,
    progress: Any = None,
    remote: str | None = None,
) -> EngineHandle:
    """Returns the saved engine for these conditions, building and saving it on a miss.

    ``graph`` is called only when building. The declared ``io`` is checked against the IO
    recorded in the saved header and, where a CUDA device is present, against the deserialized
    engine (EngineIOError). Damaged files raise CorruptEngineError, headers with other conditions
    EngineConditionError; the caller decides whether to rebuild (``force_rebuild=True``).

    ``progress`` (True, False, a function of a ``ProgressEvent``, or None to follow
    ``TENSORACLE_PROGRESS``) shows or forwards the build's progress; Ctrl-C, or the function
    returning "stop", cancels the build and nothing is saved (see ``tensoracle.progress``).

    ``remote`` (else ``$TENSORACLE_REMOTE``) names a shared cache, s3://bucket/prefix, consulted
    on a local miss and published to after a build (docs/remote-cache.md).
    """
    weight_paths = _check_open_arguments(
        graph, declaration, name, graph_version, weights, io, force_rebuild
    )
    check_arguments(graph, declaration, progress)
    request = _request(
        declaration, name, graph_version, weight_paths, plugins, force_rebuild, logger
    )
    path, plan, keep, references, built = _obtain(
        request, graph, declaration, io, force_rebuild, logger, progress, remote
    )
    if not built:  # a fresh build was checked before it was saved
        _check_header_io(io, declaration, references, path)
    handle = SavedEngineHandle(
        chosen=request.chosen,
        path=path,
        plan=plan,
        keep=keep,
        io=io,
        declaration=declaration,
        references=references,
        built=built,
        logger=logger,
    )
    if gpu.absent_reason() is None:
        handle.engine  # noqa: B018 (deserialize now, so open_engine reports unusable plans)
    return handle


def prepare_engine(
    graph: Graph,
    declaration: EngineBuild,
    *,
    name: str,
    graph_version: str,
    weights: Sequence[str | os.PathLike[str]],
    io: EngineIO,
    plugins: Iterable[str | os.PathLike[str]] = (),
    force_rebuild: bool = False,
    logger: Any = None,
    progress: Any = None,
    remote: str | None = None,
) -> PreparedEngine:
    """Fills the cache without deserializing (no CUDA device needed with TensorRT-RTX): builds
    and saves on a miss, checks ``io`` against the saved header, and says whether it built."""
    weight_paths = _check_open_arguments(
        graph, declaration, name, graph_version, weights, io, force_rebuild
    )
    check_arguments(graph, declaration, progress)
    request = _request(
        declaration, name, graph_version, weight_paths, plugins, force_rebuild, logger
    )
    path, _plan, _keep, references, built = _obtain(
        request, graph, declaration, io, force_rebuild, logger, progress, remote
    )
    if not built:  # a fresh build was checked before it was saved
        _check_header_io(io, declaration, references, path)
    reason = rebuild.describe(references.get("rebuild_reason"))
    return PreparedEngine(path=path, built=built, rebuild_reason=reason)

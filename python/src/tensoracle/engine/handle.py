"""The handles of an opened engine: ``EngineHandle`` (an engine, its runtime and its file) and
``SavedEngineHandle``, which ``open_engine`` returns for an engine obtained through the cache."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tensoracle import gpu
from tensoracle.cache.protocol import Obtained
from tensoracle.engine import log
from tensoracle.engine.backends import Backend
from tensoracle.engine.declaration import EngineBuild
from tensoracle.engine.io import EngineIO, check_io, signature_from_engine
from tensoracle.errors import CorruptEngineError


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
        from tensoracle.execution.unit import EngineExecution

        return EngineExecution(self)


class SavedEngineHandle(EngineHandle):
    """The handle ``open_engine`` returns: an ``EngineHandle`` for a saved engine, deserialized
    on first use of ``engine``, with its path, plan, backend, recorded references, and whether
    this call built it.

    Deserialization needs a CUDA device: where none is present ``open_engine`` still builds,
    saves and checks IO, and ``engine`` raises RuntimeError saying so. ``plan`` is the verified
    copy of the saved plan in this process's memory (nothing done to the file after the open
    reaches it); for an encrypted entry opened with ``decrypt_key``, the plan decrypted in this
    process's memory only. After deserialization it is released (``plan`` becomes None). Handles
    compare by identity.
    """

    # Set once in __init__ through object.__setattr__ (the dataclass is frozen); these
    # annotations declare them for the type checker and add no dataclass fields.
    _backend: Backend
    _path: Path
    _plan: Any  # a read-only buffer until deserialization, then None
    _keep: Any  # owner of the plan's memory (a SavedEngine or IHostMemory), then None
    _io: EngineIO
    _declaration: EngineBuild
    _references: dict[str, Any]
    _built: bool
    _rebuild_reason: str | None
    _logger: Any
    _lock: threading.Lock
    _engine: Any  # the deserialized ICudaEngine, None until first use
    _runtime: Any

    def __init__(
        self, obtained: Obtained, *, io: EngineIO, declaration: EngineBuild, logger: Any
    ) -> None:
        chosen = obtained.chosen
        references = obtained.references
        shape_outputs = tuple(references.get("shape_tensor_outputs", ()))
        for name, value in (
            ("_backend", chosen),
            ("_path", obtained.path),
            ("_plan", obtained.plan),
            ("_keep", obtained.keep),  # owner of the plan's memory (a SavedEngine or IHostMemory)
            ("_io", io),
            ("_declaration", declaration),
            ("_references", references),
            ("_built", obtained.built),
            ("_rebuild_reason", obtained.rebuild_reason),
            ("_logger", logger),
            ("_lock", threading.Lock()),
            ("_engine", None),
            ("_runtime", chosen.module.Runtime(log.trt_logger(chosen))),
            ("_shape_tensor_outputs", shape_outputs),
        ):
            object.__setattr__(self, name, value)

    __eq__ = object.__eq__
    __hash__ = object.__hash__

    @property
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
        return self._rebuild_reason

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

    @property
    def runtime(self) -> Any:
        return self._runtime

    @property
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
                    if any(word in problem for word in self._backend.adapter.DAMAGE_DIAGNOSTICS):
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

"""Opening a deployed engine by its deployment manifest and recipe name, without the model
package's graph code: the same selection and verification as a C++ application's
``tensoracle::deploy`` (the C++ library does both; this module only adds TensorRT).

``open_deployed("deploy.json", "encoder")`` picks the recipe's entry for this machine's GPU and
backend (``EngineTargetError`` listing the candidates and why when none can run), opens it from
the cache folder and checks it against the manifest (size, plan checksum, conditions, IO
signature; with a verify key its signature) before TensorRT sees a byte. The plugin libraries
given are checked against the SHA-256 digests the entry records and loaded from sealed copies of
the bytes checked, as the C++ library loads them. The engine is deserialized on first use of
``handle.engine`` and its IO compared with the manifest's.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tensoracle import _core, gpu
from tensoracle.cache.encryption import decrypt_key_arguments
from tensoracle.cache.remote.config import manifest_trust
from tensoracle.engine import log
from tensoracle.engine.backends import Backend, backend
from tensoracle.engine.handle import EngineHandle
from tensoracle.engine.io import described, signature_from_engine
from tensoracle.engine.plugins import load_verified_plugins, plugin_paths
from tensoracle.errors import CorruptEngineError, EngineIOError, EngineTargetError, with_refusal


class DeployedEngineHandle(EngineHandle):
    """An ``EngineHandle`` for a deployed engine: its file, the verified plan until the engine is
    deserialized (on first use of ``engine``), why it was selected, and the verify key that
    accepted its signature (None without a key). ``create_execution()`` works as for any handle.
    It holds the verified copies of its plugin libraries as long as it lives.
    """

    _opened: Any
    _plugins: tuple[_core.VerifiedPluginLibrary, ...]
    _backend: Backend
    _lock: threading.Lock
    _engine: Any
    _runtime: Any
    _logger: Any

    def __init__(
        self,
        opened: Any,
        chosen: Backend,
        logger: Any,
        plugins: tuple[_core.VerifiedPluginLibrary, ...] = (),
    ) -> None:
        for name, value in (
            ("_opened", opened),
            ("_plugins", plugins),
            ("_backend", chosen),
            ("_lock", threading.Lock()),
            ("_engine", None),
            ("_runtime", chosen.module.Runtime(log.trt_logger(chosen))),
            ("_logger", logger),
            ("_shape_tensor_outputs", ()),
        ):
            object.__setattr__(self, name, value)

    __eq__ = object.__eq__
    __hash__ = object.__hash__

    @property
    def path(self) -> Path:
        return Path(self._opened.path)

    @property
    def backend(self) -> Backend:
        return self._backend

    @property
    def recipe(self) -> str:
        return str(self._opened.recipe)

    @property
    def why(self) -> str:
        """Why this entry was selected for this GPU."""
        return str(self._opened.why)

    @property
    def signer(self) -> str | None:
        """The fingerprint of the verify key that accepted the signature, or None."""
        signer = self._opened.signer
        return None if signer is None else str(signer)

    @property
    def io_signature(self) -> dict[str, Any]:
        """The IO signature the manifest records for the entry."""
        io = self._opened.io
        return dict(io) if isinstance(io, dict) else {}

    @property
    def plan(self) -> memoryview | None:
        """The verified plan (read-only, not copied); None when the plan is streamed
        (``open_deployed(..., stream_plan=True)``), which never holds it whole."""
        with self._lock:
            plan = self._opened.plan
            return None if plan is None else memoryview(plan)

    @property
    def streamed(self) -> bool:
        """Whether the plan is handed to TensorRT chunk by chunk, each checked first."""
        return bool(self._opened.streamed)

    @property
    def runtime(self) -> Any:
        return self._runtime

    @property
    def engine(self) -> Any:
        """The deserialized ``ICudaEngine`` (deserialized and IO-checked on first access)."""
        with self._lock:
            if self._engine is None:
                object.__setattr__(self, "_engine", self._deserialize())
            return self._engine

    def _deserialize(self) -> Any:
        missing = gpu.absent_reason()
        if missing is not None:
            raise RuntimeError(
                f"deserializing the deployed engine '{self.path}' needs a CUDA device ({missing})"
            )
        stream = None
        with log.capture(self._logger) as errors:
            if self._opened.streamed:
                stream = verified_plan_stream(self._backend.module, self._opened)
                engine = self._runtime.deserialize_cuda_engine(stream)
            else:
                engine = self._runtime.deserialize_cuda_engine(self._opened.plan)
        if stream is not None and stream.failure is not None:
            raise stream.failure  # a chunk not the verified one: nothing of it was handed on
        if stream is not None and engine is not None:
            # TensorRT may stop reading before the plan's end: what it did not read is read and
            # checked now, and the engine is dropped unless the plan was checked whole.
            self._opened.check_rest()
        if engine is None:
            raise CorruptEngineError(
                f"{self._backend.name} {self._backend.version} cannot deserialize the plan in "
                f"'{self.path}': {log.describe(errors)}. Check that plugins= passes every "
                "plugin library the engine uses"
            )
        check_deployed_io(
            signature_from_engine(self._backend.module, engine), self.io_signature, str(self.path)
        )
        return engine

    def __repr__(self) -> str:
        state = "deserialized" if self._engine is not None else "not deserialized"
        return f"DeployedEngineHandle(path={str(self.path)!r}, backend={self._backend!r}, {state})"


class CheckedPlanReads:
    """The reads and seeks of a stream reader over a streamed deployed engine ``opened``, as
    TensorRT's ``IStreamReaderV2`` makes them (``seek_positions``: its ``SeekPosition``): each
    read returns bytes only once the chunk they lie in was checked against the verified header
    (``opened.read_plan``), and no more than the rest of that 4 MiB chunk (TensorRT's Python
    binding asks again for the rest), so that a read never holds more than one chunk. A refused
    chunk, or any other failure, ends the stream there (an empty read: nothing is raised into
    TensorRT, whose binding would only print it), and ``failure`` holds the exception that says
    why (CorruptEngineError for a chunk that is not the verified one)."""

    def __init__(self, opened: Any, seek_positions: Any) -> None:
        self._opened = opened
        self._positions = seek_positions
        self.position = 0
        self.failure: Exception | None = None

    def read(self, num_bytes: int, stream: int) -> bytes:
        if self.failure is not None:
            return b""
        try:
            data: bytes = self._opened.read_plan(self.position, num_bytes)
        except Exception as failed:  # kept, and raised once TensorRT returns
            self.failure = failed
            return b""
        self.position += len(data)
        return data

    def seek(self, offset: int, where: Any) -> bool:
        start = {
            self._positions.SET: _core.PlanSeekFrom.SET,
            self._positions.CUR: _core.PlanSeekFrom.CUR,
            self._positions.END: _core.PlanSeekFrom.END,
        }[where]
        target = _core.plan_seek_target(self.position, int(self._opened.plan_size), start, offset)
        if target is None:
            return False
        self.position = target
        return True


def verified_plan_stream(module: Any, opened: Any) -> Any:
    """The backend ``module``'s ``IStreamReaderV2`` making the reads of CheckedPlanReads over
    ``opened``, for ``Runtime.deserialize_cuda_engine``."""

    class VerifiedPlanStream(CheckedPlanReads, module.IStreamReaderV2):  # type: ignore[misc]
        def __init__(self) -> None:
            module.IStreamReaderV2.__init__(self)
            CheckedPlanReads.__init__(self, opened, module.SeekPosition)

    return VerifiedPlanStream()


def check_deployed_io(observed: dict[str, Any], expected: dict[str, Any], path: str) -> None:
    """EngineIOError naming the tensor, the field and both values where the deserialized
    engine's IO (``observed``) differs from the manifest's (``expected``), by the core's rule
    (first_io_difference, as the C++ deploy library checks an engine: a fixed input without a
    reported profile matches a recorded profile equal to its shape)."""
    recorded_tensors = described(expected, default_location="DEVICE", default_format="LINEAR")
    difference = _core.first_io_difference(
        described(observed, default_location="DEVICE", default_format="LINEAR"), recorded_tensors
    )
    if difference is None:
        return
    found = {entry["name"]: entry for entry in observed.get("tensors", [])}
    recorded = {entry["name"]: entry for entry in expected.get("tensors", [])}
    name, field = difference.tensor, difference.field
    at = _core.io_field(difference, recorded_tensors)
    if field == "name":
        where = "the manifest" if name in recorded else "the deserialized engine"
        raise with_refusal(
            EngineIOError(
                f"deployed engine '{path}': tensor {name!r} is only in {where}: "
                f"observed={sorted(found)}, expected={sorted(recorded)}"
            ),
            path=path,
            field=at,
            observed=difference.observed,
            expected=difference.expected,
        )
    raise with_refusal(
        EngineIOError(
            f"deployed engine '{path}': tensor {name!r} field {field!r}: "
            f"observed={found[name].get(field)}, expected={recorded[name].get(field)}"
        ),
        path=path,
        field=at,
        observed=difference.observed,
        expected=difference.expected,
    )


def open_deployed(
    manifest: str | os.PathLike[str],
    recipe: str,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    verify_key: str | os.PathLike[str] | None = None,
    plugins: Iterable[str | os.PathLike[str]] = (),
    logger: Any = None,
    skip_signature_verification: bool = False,
    stream_plan: bool = False,
    trust_policy: str | os.PathLike[str] | None = None,
    minimum_version: int = 0,
    decrypt_key: str | os.PathLike[str] | None = None,
) -> DeployedEngineHandle:
    """The deployed engine of ``recipe`` in the deployment manifest ``manifest`` for this
    machine's GPU and backend, opened from ``cache_dir`` (the default cache folder when None).

    ``verify_key`` (default: ``TENSORACLE_REMOTE_VERIFY_KEY``) is an Ed25519 public key, as the
    path of its PEM file or as its PEM text (a string starting with ``-----BEGIN``), and
    ``trust_policy`` (default: ``TENSORACLE_TRUST_POLICY``, which takes precedence over the
    verify key's variable) the path of a trust policy file (its keys, M of which must sign, and
    a minimum version; give one of the two). With either, the manifest must be a signed manifest
    (``tensoracle manifest sign``) that they accept, not expired, of a version no lower than
    ``minimum_version`` and than the last version this cache folder accepted for its spec, and
    the entry's file must be byte for byte the one it names; an unsigned manifest is refused
    (UntrustedEngineError naming what failed). Without either, a plain manifest is read as it
    is (whoever can write it chooses the engine), and a signed manifest, or an entry the
    manifest records a signature for, is refused unless ``skip_signature_verification`` is
    True. ``plugins`` are the plugin libraries the entry was built with (its conditions record
    their SHA-256): each is read into a sealed in-memory copy and checked before any is loaded,
    then loaded into the backend's plugin registry from that copy (once per process), so that a
    library changed on disk after the check is not what runs. Linux only (elsewhere a non-empty
    ``plugins`` raises RuntimeError).

    With ``stream_plan`` only the header is read and checked here, the file stays open, and
    TensorRT reads the plan through its stream reader (``IStreamReaderV2``) in 4 MiB chunks, each
    checked against the verified header just before it is handed over: the plan is never held
    whole (``handle.plan`` is None). Entries saved before chunk digests existed, and backends
    without ``IStreamReaderV2``, are read whole (``handle.streamed`` says which).

    ``decrypt_key`` opens an encrypted entry (``tensoracle build --encrypt-to``, ``tensoracle
    cache encrypt``): an X25519 private key, as the path of its PEM file (``openssl genpkey
    -algorithm x25519``) or as its PEM text. Each chunk is checked as above, then authenticated
    and decrypted before it is handed to TensorRT; the plan is decrypted only in this process's
    memory. With a key, an entry that is not encrypted for it is refused (EngineKeyError), a
    plain one included; without one, an encrypted entry is refused.

    Raises:
        EngineTargetError: No GPU is present, or no entry of the recipe can run on it with this
            backend (the message lists the candidates and why: the first ten in full).
        ValueError: The manifest is invalid (naming the file and field), or has no such recipe.
        FileNotFoundError: The selected entry is not in the cache folder (pull it with
            ``tensoracle cache pull --manifest``).
        CorruptEngineError, EngineConditionError, EngineIOError, UntrustedEngineError: The
            entry is not the manifest's (naming the file, field, observed and expected value),
            or the manifest is not one the keys accept (naming what failed).
            EngineConditionError also for a plugin library the entry was not built with (naming
            the file, its SHA-256 and the entry's) and for a recorded one none of ``plugins`` is.
        OSError: A plugin library cannot be read or is not a regular file.
        PluginLibraryError: A verified library does not export ``getCreators``, or the registry
            refuses it.
    """
    chosen = backend()
    device = gpu.properties()
    if device is None:
        raise EngineTargetError(
            f"cannot select a deployed engine of {recipe!r}: no GPU ({gpu.absent_reason()})"
        )
    trust = manifest_trust(trust_policy, verify_key)
    opened = _core.open_deployed(
        str(manifest),
        recipe,
        device,
        chosen.name,
        chosen.version,
        None if cache_dir is None else str(cache_dir),
        None if trust.key_file is None else str(trust.key_file),
        trust.key_text,
        skip_signature_verification,
        stream_plan and hasattr(chosen.module, "IStreamReaderV2"),
        None if trust.policy is None else str(trust.policy),
        minimum_version,
        *decrypt_key_arguments(decrypt_key),
    )
    # Every library checked before any is loaded: a refused one runs no code, nor do the others.
    verified = tuple(opened.verify_plugins(plugin_paths(plugins)))
    load_verified_plugins(verified, chosen, logger)
    return DeployedEngineHandle(opened, chosen, logger, verified)

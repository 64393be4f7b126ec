"""``open_engine`` and ``prepare_engine``: the open protocol (``tensoracle.cache.protocol``),
followed by a deserialized handle or by a note of what was prepared."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tensoracle import gpu
from tensoracle.cache.protocol import obtain
from tensoracle.engine.build import Graph
from tensoracle.engine.declaration import EngineBuild
from tensoracle.engine.handle import EngineHandle, SavedEngineHandle
from tensoracle.engine.io import EngineIO


@dataclass(frozen=True)
class PreparedEngine:
    """What ``prepare_engine`` did: the saved file, and whether this call built it."""

    path: Path
    built: bool
    rebuild_reason: str | None = None


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
    encrypt_to: Sequence[str | os.PathLike[str]] = (),
    decrypt_key: str | os.PathLike[str] | None = None,
) -> EngineHandle:
    """Returns the saved engine for these conditions, building and saving it on a miss.

    ``graph`` is called only when building. The declared ``io`` is checked against the IO
    recorded in the saved header and, where a CUDA device is present, against the deserialized
    engine (EngineIOError). Damaged files raise CorruptEngineError, headers with other conditions
    EngineConditionError; the caller decides whether to rebuild (``force_rebuild=True``).

    ``progress`` (True, False, a function of a ``ProgressEvent``, or None to follow
    ``TENSORACLE_PROGRESS``) shows or forwards the build's progress; Ctrl-C, or the function
    returning "stop", cancels the build and nothing is saved (see ``tensoracle.engine.progress``).

    ``remote`` (else ``$TENSORACLE_REMOTE``) names a shared cache, s3://bucket/prefix, consulted
    on a local miss and published to after a build (docs/remote-cache.md).

    ``encrypt_to`` (X25519 public keys: PEM file paths or PEM texts) saves a build encrypted for
    those recipients, sealed as it is written, so that the plaintext plan never reaches the disk;
    a saved entry is then reused only when it is encrypted for exactly those keys.
    ``decrypt_key`` (an X25519 private key: its PEM file's path or its PEM text) opens an
    encrypted entry: its plan is decrypted into this process's memory only (``handle.plan``), each
    chunk authenticated. Without it an encrypted entry raises EngineKeyError, and with it so does a
    plain one (a downgrade), as does a miss that would save a build unencrypted (pass
    ``encrypt_to`` too). See docs/encryption.md.
    """
    obtained = obtain(
        graph,
        declaration,
        name=name,
        graph_version=graph_version,
        weights=weights,
        io=io,
        plugins=plugins,
        force_rebuild=force_rebuild,
        logger=logger,
        progress=progress,
        remote=remote,
        for_this_device=True,
        encrypt_to=encrypt_to,
        decrypt_key=decrypt_key,
    )
    handle = SavedEngineHandle(obtained, io=io, declaration=declaration, logger=logger)
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
    encrypt_to: Sequence[str | os.PathLike[str]] = (),
) -> PreparedEngine:
    """Fills the cache without deserializing (no CUDA device needed with TensorRT-RTX): builds
    and saves on a miss, checks ``io`` against the saved header, and says whether it built.

    ``encrypt_to``: as for ``open_engine``, the build is saved encrypted for those public keys
    (and so published, with a remote cache), and a saved entry is reused only when it is
    encrypted for exactly those keys. No key is needed to reuse one: its plan is not read."""
    obtained = obtain(
        graph,
        declaration,
        name=name,
        graph_version=graph_version,
        weights=weights,
        io=io,
        plugins=plugins,
        force_rebuild=force_rebuild,
        logger=logger,
        progress=progress,
        remote=remote,
        encrypt_to=encrypt_to,
    )
    return PreparedEngine(obtained.path, obtained.built, obtained.rebuild_reason)

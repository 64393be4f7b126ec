"""Exception and warning types raised by tensoracle, and where its warnings point."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TypeVar


class EngineCacheError(ValueError):
    """A saved engine cannot be used as it is; the caller decides whether to rebuild."""

    #: The refusal's fields, set where the library knows them (None otherwise): the file or
    #: object refused, the place inside it (``entries[0].io``), what was found there, what was
    #: required, and what to do about it.
    path: str | None = None
    field: str | None = None
    observed: str | None = None
    expected: str | None = None
    remedy: str | None = None


class CorruptEngineError(EngineCacheError):
    """A saved engine file is incomplete or damaged, or the runtime cannot deserialize its plan."""


class EngineConditionError(EngineCacheError):
    """A saved engine's header records build conditions other than the requested ones."""


class EngineIOError(EngineCacheError):
    """A saved engine's inputs or outputs differ from the declared ``EngineIO``."""


class UntrustedEngineError(EngineCacheError):
    """A remote engine is unsigned, or not signed by the key this node is configured to trust."""


class EngineKeyError(EngineCacheError):
    """An encrypted engine cannot be opened with the key given: none was given, the key is no
    recipient of the engine, or it does not unwrap the engine's data key."""


class EngineTargetError(ValueError):
    """The engine declared for ``open_engine`` could not run on this machine's GPU (its build
    targets or hardware compatibility level leave the GPU out); nothing is built or read."""

    #: The refusal's fields, set where the library knows them (None otherwise): the file or
    #: object refused, the place inside it (``entries[0].io``), what was found there, what was
    #: required, and what to do about it.
    path: str | None = None
    field: str | None = None
    observed: str | None = None
    expected: str | None = None
    remedy: str | None = None


class PluginLibraryError(ValueError):
    """A plugin library is missing, unreadable, incompatible, or changed after loading."""


class BuildCancelledError(RuntimeError):
    """A build was stopped by its ``progress`` function, which returned ``"stop"``."""


class ShapeTensorOutputWarning(UserWarning):
    """The engine has outputs marked as shape tensors, which execution units cannot handle."""


_Refused = TypeVar("_Refused", bound=BaseException)


def with_refusal(
    error: _Refused,
    *,
    path: str | None,
    field: str | None,
    observed: str | None,
    expected: str | None,
) -> _Refused:
    """``error`` carrying a refusal's fields as the core's exceptions carry them (``path``,
    ``field``, ``observed``, ``expected``; ``remedy`` None), for a refusal made in Python."""
    error.path = path  # type: ignore[attr-defined]
    error.field = field  # type: ignore[attr-defined]
    error.observed = observed  # type: ignore[attr-defined]
    error.expected = expected  # type: ignore[attr-defined]
    error.remedy = None  # type: ignore[attr-defined]
    return error


def shape_output_message(names: Sequence[str]) -> str:
    """The ShapeTensorOutputWarning text, at build time and when an execution unit is created,
    for an engine whose outputs ``names`` are shape tensors."""
    listed = ", ".join(repr(n) for n in names)
    return (
        f"engine outputs {listed} are shape tensors; execution units (create_execution()) "
        "cannot handle them, and running such an engine may crash the process"
    )


class RemoteCacheWarning(UserWarning):
    """The remote engine cache was unusable or refused an object; the engine is built locally."""


class CheckpointConversionError(ValueError):
    """A ``.pth`` checkpoint cannot be converted to safetensors; the message names the key."""


class BundleError(ValueError):
    """A cubin bundle's manifest, one of its entries or paths breaks a rule of the format."""

    #: The refusal's fields, set where the library knows them (None otherwise): the file or
    #: object refused, the place inside it (``entries[0].io``), what was found there, what was
    #: required, and what to do about it.
    path: str | None = None
    field: str | None = None
    observed: str | None = None
    expected: str | None = None
    remedy: str | None = None


class MissingCubinError(BundleError):
    """A cubin file that an entry of bundle.json names does not exist."""


class CorruptCubinError(BundleError):
    """A cubin's length or SHA-256 differs from its entry, or it lacks the entry's kernel."""


class CubinArchitectureError(BundleError):
    """A cubin's ELF header names no accepted SM, or another SM than its entry's ``target_sm``."""


#: Deprecated name of :class:`CubinArchitectureError` (tensoracle before 1.x conformance).
FalseSmClaimError = CubinArchitectureError


class PluginBundleMismatchError(BundleError):
    """A plugin library is unreadable, lacks the bundle digest, carries another digest, or
    does not export an entry's cubin bytes."""


class BundleAbiError(BundleError):
    """A kernel's parameters or scratch needs differ from what the cubin runtime supports (a
    :class:`BundleError`; 1.x raises plain ``BundleError`` for these)."""


class KernelCompileError(ValueError):
    """Triton cannot compile a bundle's kernel for a target; the message names both.

    A ValueError, as every producer refusal of a kernel is."""


class ProducerToolError(FileNotFoundError):
    """ptxas or cuobjdump is not where it should be; the message names the package, the path
    and how to fix it (an installed wheel lacking the file, or a bad explicit path)."""


def caller_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning raised by the calling function point at the
    first frame outside the tensoracle package: the user's line, however deep the call."""
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(package):
        frame = frame.f_back
        level += 1
    return level

"""Exception and warning types raised by tensoracle, and where its warnings point."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence


class EngineCacheError(ValueError):
    """A saved engine cannot be used as it is; the caller decides whether to rebuild."""


class CorruptEngineError(EngineCacheError):
    """A saved engine file is incomplete or damaged, or the runtime cannot deserialize its plan."""


class EngineConditionError(EngineCacheError):
    """A saved engine's header records build conditions other than the requested ones."""


class EngineIOError(EngineCacheError):
    """A saved engine's inputs or outputs differ from the declared ``EngineIO``."""


class UntrustedEngineError(EngineCacheError):
    """A remote engine is unsigned, or not signed by the key this node is configured to trust."""


class PluginLibraryError(ValueError):
    """A plugin library is missing, unreadable, incompatible, or changed after loading."""


class BuildCancelledError(RuntimeError):
    """A build was stopped by its ``progress`` function, which returned ``"stop"``."""


class ShapeTensorOutputWarning(UserWarning):
    """The engine has outputs marked as shape tensors, which execution units cannot handle."""


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
    """A cubin bundle, one of its cubins, or a plugin library built from it cannot be trusted."""


class MissingCubinError(BundleError):
    """A cubin that bundle.json lists, or that a bundle target needs, is absent."""


class CorruptCubinError(BundleError):
    """A cubin is not a CUDA ELF image, lacks its kernel, or differs from its recorded SHA-256."""


class FalseSmClaimError(BundleError):
    """A cubin's ELF header names another SM than the one its directory and bundle.json claim."""


class PluginBundleMismatchError(BundleError):
    """A plugin library does not embed exactly the cubins of the bundle it is checked against."""


class BundleAbiError(BundleError):
    """A kernel's parameters or scratch needs differ from what the cubin runtime supports."""


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

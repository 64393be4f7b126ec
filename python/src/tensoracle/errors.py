"""Exception and warning types raised by tensoracle."""

from __future__ import annotations


class EngineCacheError(ValueError):
    """A saved engine cannot be used as it is; the caller decides whether to rebuild."""


class CorruptEngineError(EngineCacheError):
    """A saved engine file is incomplete or damaged, or the runtime cannot deserialize its plan."""


class EngineConditionError(EngineCacheError):
    """A saved engine's header records build conditions other than the requested ones."""


class EngineIOError(EngineCacheError):
    """A saved engine's inputs or outputs differ from the declared ``EngineIO``."""


class PluginLibraryError(RuntimeError):
    """A plugin library is missing, unreadable, incompatible, or changed after loading."""


class ShapeTensorOutputWarning(UserWarning):
    """The engine has outputs marked as shape tensors, which execution units cannot handle."""


class CheckpointConversionError(ValueError):
    """A ``.pth`` checkpoint cannot be converted to safetensors; the message names the key."""

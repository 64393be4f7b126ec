"""Conversion of PyTorch ``.pth`` checkpoints to safetensors files (the ``convert`` extra).

torch is imported only when a conversion runs, never when this module is imported.
"""

from __future__ import annotations

import errno
import os
import pickle
import re
import tempfile
from collections.abc import Container, Mapping
from pathlib import Path
from typing import Any

from tensoracle.errors import CheckpointConversionError

__all__ = ["CheckpointConversionError", "pth_to_safetensors"]

_INSTALL_HINT = "pip install 'tensoracle[convert]'"
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


def pth_to_safetensors(source: str | os.PathLike[str], destination: str | os.PathLike[str]) -> None:
    """Converts a ``.pth`` checkpoint of tensors into a safetensors file.

    The checkpoint must be a mapping with string keys whose values are tensors or nested
    mappings of the same form; nested keys are joined with ``.``. Each tensor keeps its dtype,
    shape and values; shared and non-contiguous tensors are written as independent contiguous
    copies. The checkpoint is loaded on the CPU with ``torch.load(weights_only=True)``, with no
    fallback to unrestricted unpickling.

    The destination is written to a temporary file in its directory and renamed into place
    only when complete, so an existing destination is replaced on success and untouched
    otherwise.

    Args:
        source: Path of the ``.pth`` checkpoint.
        destination: Path of the safetensors file to write.

    Raises:
        ImportError: torch (or safetensors' torch support) is not installed.
        TypeError: The checkpoint is not a mapping, a key is not a string, or a value is neither
            a tensor nor a mapping.
        CheckpointConversionError: (a ValueError) The checkpoint cannot be unpickled safely, a
            mapping contains itself, two keys flatten to the same name, or a tensor is not a
            plain dense tensor safetensors can store.
        OSError, RuntimeError: torch cannot read the file (missing, or not a checkpoint); such
            errors come unchanged from ``torch.load``.
    """
    torch, save_file = _import_torch()
    source_path = Path(source)
    destination_path = Path(destination)
    if (
        destination_path.exists()
        and source_path.exists()
        and os.path.samefile(source_path, destination_path)
    ):
        raise CheckpointConversionError(
            f"destination '{destination_path}' is the source checkpoint; "
            "choose another path so that the checkpoint is kept"
        )
    if not destination_path.parent.is_dir():
        raise FileNotFoundError(
            errno.ENOENT, "the destination's directory does not exist", str(destination_path.parent)
        )
    try:
        checkpoint = torch.load(source_path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:  # what weights_only refuses: code, other globals
        raise CheckpointConversionError(
            f"'{source_path}' cannot be loaded with torch.load(weights_only=True): "
            f"{_load_failure_reason(error)}"
        ) from error
    if not isinstance(checkpoint, Mapping):
        raise TypeError(
            f"'{source_path}' holds a value of type {type(checkpoint).__name__}, "
            "not a mapping of tensors"
        )
    tensors: dict[str, Any] = {}
    _flatten(torch, _storable_dtypes(torch), checkpoint, "", tensors, set())
    _write_atomically(save_file, tensors, destination_path)


def _import_torch() -> tuple[Any, Any]:
    try:
        import torch
        from safetensors.torch import save_file
    except ImportError as error:
        raise ImportError(
            f"converting .pth checkpoints needs torch; install it with: {_INSTALL_HINT}"
        ) from error
    return torch, save_file


def _storable_dtypes(torch: Any) -> Container[Any] | None:
    """The torch dtypes safetensors writes, so that others are named before writing; None
    where this safetensors version does not expose its table (save_file then reports them)."""
    from safetensors import torch as safetensors_torch

    table = getattr(safetensors_torch, "_TYPES", None)  # {"F32": torch.float32, ...}
    if not isinstance(table, dict):
        return None
    dtypes = {value for value in table.values() if isinstance(value, torch.dtype)}
    return dtypes or None


def _load_failure_reason(error: Exception) -> str:
    """The core of torch's refusal on one line, without its advice to load unsafely."""
    text = _ANSI_ESCAPE.sub("", str(error))
    refusal = re.search(r"WeightsUnpickler error:\s*(.*?)(?:\.\s|\n\s*\n|$)", text, re.DOTALL)
    if refusal is not None:
        reason = " ".join(refusal.group(1).split())
        if "global" in reason:
            reason += "; checkpoints holding Python objects other than tensors are not converted"
        return reason
    text = " ".join(text.split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _flatten(
    torch: Any,
    storable: Container[Any] | None,
    mapping: Mapping[Any, Any],
    prefix: str,
    out: dict[str, Any],
    enclosing: set[int],
) -> None:
    enclosing.add(id(mapping))
    for key, value in mapping.items():
        if not isinstance(key, str):
            where = f" in '{prefix[:-1]}'" if prefix else ""
            raise TypeError(f"key {key!r}{where} is of type {type(key).__name__}, not a string")
        name = prefix + key
        if isinstance(value, Mapping):
            if id(value) in enclosing:
                raise CheckpointConversionError(
                    f"'{name}' is a mapping that contains itself; it cannot be flattened"
                )
            _flatten(torch, storable, value, name + ".", out, enclosing)
            continue
        if not isinstance(value, torch.Tensor):
            raise TypeError(
                f"'{name}' holds a value of type {type(value).__name__}, "
                "not a tensor or a mapping of tensors"
            )
        if value.layout != torch.strided:
            raise CheckpointConversionError(
                f"'{name}' is a {value.layout} tensor; only dense tensors can be converted"
            )
        if value.is_quantized:
            raise CheckpointConversionError(
                f"'{name}' is a quantized tensor ({value.dtype}); only plain dense tensors can "
                "be converted"
            )
        if storable is not None and value.dtype not in storable:
            raise CheckpointConversionError(
                f"'{name}' has dtype {value.dtype}, which safetensors cannot store"
            )
        if name in out:
            raise CheckpointConversionError(
                f"'{name}' occurs twice after joining nested keys with '.'"
            )
        # An independent contiguous copy: shared storage and strides do not reach the file.
        out[name] = value.detach().clone(memory_format=torch.contiguous_format)
    enclosing.discard(id(mapping))


def _write_atomically(save_file: Any, tensors: dict[str, Any], destination: Path) -> None:
    directory = destination.parent
    handle, temporary_name = tempfile.mkstemp(
        prefix=f".{destination.name}.", suffix=".tmp", dir=directory
    )
    os.close(handle)
    temporary = Path(temporary_name)
    try:
        try:
            save_file(tensors, str(temporary), metadata={"format": "pt"})
        except (ValueError, TypeError, RuntimeError, KeyError) as error:
            reason = " ".join(str(error).split())
            raise CheckpointConversionError(
                f"safetensors cannot store the checkpoint: {reason}"
            ) from error
        with open(temporary, "rb") as written:
            os.fsync(written.fileno())
        os.replace(temporary, destination)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    _sync_directory(directory)


def _sync_directory(directory: Path) -> None:
    """Makes the rename durable where the platform allows opening a directory."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)

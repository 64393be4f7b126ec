"""The GPU an engine is built for, as the CUDA driver describes it (None without a usable GPU)."""

from __future__ import annotations

from typing import Any, cast

from tensoracle import _core


def properties() -> dict[str, Any] | None:
    """Compatibility properties of the current context's device (else device 0), or None."""
    # The binding is declared as returning `object`; it returns a dict or None.
    return cast("dict[str, Any] | None", _core.gpu_properties())


def absent_reason() -> str | None:
    """Why no GPU can be described here (no driver, no device, a driver error), or None."""
    return _core.gpu_absent_reason()

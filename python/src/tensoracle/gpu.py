"""The GPU an engine is built for, as the CUDA driver describes it (None without a usable GPU).

Test seam: ``TENSORACLE_DESCRIBED_GPU`` set to a JSON object of GPU properties (at least
``name`` and ``compute_capability``, e.g. ``{"name": "NVIDIA GeForce RTX 4090",
"compute_capability": "8.9"}``) makes ``properties()`` return that description instead of asking
the driver, so that the identity and the matching rule of another GPU can be exercised on any
machine. It describes; it does not make a GPU: ``absent_reason()`` still tells the truth, so an
engine is deserialized only where a real device is present. Never set it outside tests.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, cast

from tensoracle import _core

DESCRIBED_VARIABLE = "TENSORACLE_DESCRIBED_GPU"
_CAPABILITY = re.compile(r"[1-9][0-9]?\.[0-9]")


def driver_library(platform: str | None = None) -> str:
    """The name the CUDA driver library is loaded by on ``platform`` (a ``sys.platform`` value;
    this machine's when None): ``nvcuda.dll`` on Windows, found in the system directory, else
    ``libcuda.so.1``. The core loads the driver by the same name."""
    chosen = sys.platform if platform is None else platform
    return "nvcuda.dll" if chosen == "win32" else "libcuda.so.1"


def described() -> dict[str, Any] | None:
    """The description set by ``TENSORACLE_DESCRIBED_GPU``, or None when it is unset.

    ValueError naming the variable and its value when it is not a JSON object with a string
    ``name`` and a ``compute_capability`` written ``MAJOR.MINOR``."""
    text = os.environ.get(DESCRIBED_VARIABLE, "")
    if not text.strip():
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{DESCRIBED_VARIABLE}={text!r} is not JSON ({error})") from error
    if not isinstance(value, dict):
        raise ValueError(f"{DESCRIBED_VARIABLE}={text!r} must be a JSON object of GPU properties")
    name = value.get("name")
    capability = value.get("compute_capability")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{DESCRIBED_VARIABLE}={text!r} needs a non-empty string 'name'")
    if not isinstance(capability, str) or not _CAPABILITY.fullmatch(capability):
        raise ValueError(
            f"{DESCRIBED_VARIABLE}={text!r}: compute_capability={capability!r} must be a string "
            "written MAJOR.MINOR, such as '8.9'"
        )
    for key, item in value.items():
        if isinstance(item, float) or not isinstance(item, str | int | bool):
            raise ValueError(
                f"{DESCRIBED_VARIABLE}={text!r}: {key}={item!r} must be a string, an integer or "
                "true/false"
            )
    return value


def properties() -> dict[str, Any] | None:
    """Compatibility properties of the current context's device (else device 0), or None; the
    test seam's description when ``TENSORACLE_DESCRIBED_GPU`` is set."""
    seam = described()
    if seam is not None:
        return seam
    # The binding is declared as returning `object`; it returns a dict or None.
    return cast("dict[str, Any] | None", _core.gpu_properties())


def absent_reason() -> str | None:
    """Why no GPU can be described here (no driver, no device, a driver error), or None."""
    return _core.gpu_absent_reason()

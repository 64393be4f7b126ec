"""Selection of the TensorRT flavour tensoracle builds and opens engines with.

Two backends share one code base: ``tensorrt`` (TensorRT 11) and ``tensorrt_rtx``
(TensorRT-RTX). ``TENSORACLE_BACKEND`` names one; otherwise TensorRT is used when importable,
else TensorRT-RTX. Everything the two Python APIs share is written once in the modules that use
the backend; every difference lives in the small adapter modules next to this file.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from tensoracle.engine.backends import tensorrt as _tensorrt_adapter
from tensoracle.engine.backends import tensorrt_rtx as _rtx_adapter

ENVIRONMENT_VARIABLE = "TENSORACLE_BACKEND"

# Preference order for automatic selection.
_ADAPTERS: dict[str, ModuleType] = {
    _tensorrt_adapter.NAME: _tensorrt_adapter,
    _rtx_adapter.NAME: _rtx_adapter,
}


@dataclass(frozen=True)
class Backend:
    """The chosen backend: its Python module (use it as ``trt``), name and exact version."""

    name: str
    module: Any
    version: str
    adapter: ModuleType

    def __repr__(self) -> str:
        return f"Backend(name={self.name!r}, version={self.version!r})"


def _load(name: str) -> Backend:
    adapter = _ADAPTERS[name]
    module = importlib.import_module(adapter.MODULE_NAME)
    return Backend(name=name, module=module, version=str(module.__version__), adapter=adapter)


def backend() -> Backend:
    """Returns the backend selected by ``TENSORACLE_BACKEND``, else the first importable one.

    Graph functions receive this backend's ``INetworkDefinition``; write
    ``trt = tensoracle.backend().module`` to use the matching types and layers.
    """
    requested = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if requested:
        if requested not in _ADAPTERS:
            raise ValueError(
                f"{ENVIRONMENT_VARIABLE}={requested!r} is not a backend; "
                f"use one of {', '.join(sorted(_ADAPTERS))} or leave it unset"
            )
        try:
            return _load(requested)
        except ImportError as error:
            adapter = _ADAPTERS[requested]
            raise ImportError(
                f"{ENVIRONMENT_VARIABLE}={requested} but the module {adapter.MODULE_NAME!r} "
                f"cannot be imported ({error}); install it with "
                f"pip install '{adapter.EXTRA}'"
            ) from error
    failures: list[str] = []
    for name in _ADAPTERS:
        try:
            return _load(name)
        except ImportError as error:
            failures.append(f"{_ADAPTERS[name].MODULE_NAME}: {error}")
    extras = " or ".join(f"'{adapter.EXTRA}'" for adapter in _ADAPTERS.values())
    raise ImportError(
        "tensoracle needs TensorRT or TensorRT-RTX; neither can be imported "
        f"({'; '.join(failures)}). Install one with pip install {extras}"
    )


__all__ = ["ENVIRONMENT_VARIABLE", "Backend", "backend"]

"""The rule for tests that need TensorRT or TensorRT-RTX: where neither imports, they fail.

``make test`` installs TensorRT-RTX, so a backend that does not import there is a broken install,
and a suite that skipped its engine tests would report it as a success. Only a run that states it
is meant to go without a backend, with the pytest option ``--without-backend``, skips them, with
the reason. conftest.py registers the option and applies the rule to the ``backend`` marker;
engine_helpers.py applies it when a test module imports it.
"""

from __future__ import annotations

from typing import Any, NoReturn

import pytest

OPTION = "--without-backend"

_without_backend = False  # set from the command line by pytest_configure


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        OPTION,
        action="store_true",
        help="skip, with the reason, the tests that need TensorRT or TensorRT-RTX where neither "
        "imports (without it they fail there: make test installs TensorRT-RTX)",
    )


def pytest_configure(config: pytest.Config) -> None:
    global _without_backend
    _without_backend = bool(config.getoption(OPTION))


def backend_missing(reason: str) -> NoReturn:
    """Skips (under ``--without-backend``) or fails the test, or the module at its top level."""
    if _without_backend:
        pytest.skip(f"needs a TensorRT backend: {reason} ({OPTION})", allow_module_level=True)
    pytest.fail(
        f"needs a TensorRT backend, and none imports: {reason}. make test installs TensorRT-RTX, "
        f"so this is a broken install; run pytest with {OPTION} to skip these tests on purpose",
        pytrace=False,
    )


def backend_absent_reason() -> str | None:
    """Why neither TensorRT nor TensorRT-RTX can be used here, or None when one can."""
    import tensoracle

    try:
        tensoracle.backend()
    except ImportError as error:
        return str(error)
    return None


def backend_module() -> Any:
    """The selected backend's module (``trt``), or the failure or skip of backend_missing."""
    import tensoracle

    try:
        return tensoracle.backend().module
    except ImportError as error:
        reason = str(error)
    backend_missing(reason)  # outside the handler: the message is not chained to the ImportError


def rtx_module() -> Any:
    """TensorRT-RTX's module (``tensorrt_rtx``), which builds engines without a GPU, for the tests
    that describe networks with it; where it does not import, the failure or skip of
    backend_missing."""
    import importlib

    try:
        return importlib.import_module("tensorrt_rtx")
    except ImportError as error:
        reason = f"TensorRT-RTX (tensorrt_rtx) does not import: {error}"
    backend_missing(reason)

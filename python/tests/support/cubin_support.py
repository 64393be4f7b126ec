"""Shared helpers for the producer's tests: whether the producer extra is installed, and running
compile_bundle in a test session that imported torch.

The producer extra (Triton and the CUDA tool wheels) is installed by ``make test``: where it is
absent, its tests fail. A machine meant to run without it (the GPU device machine, say) sets
``TENSORACLE_TESTS_WITHOUT_PRODUCER=1``, and there they skip with the reason.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

WITHOUT_PRODUCER = "TENSORACLE_TESTS_WITHOUT_PRODUCER"


def producer_absent_reason() -> str | None:
    """Why the producer extra (Triton, ptxas, cuobjdump) cannot be used here, or None."""
    if importlib.util.find_spec("triton") is None:
        return "the producer extra (Triton) is not installed"
    from tensoracle.errors import ProducerToolError
    from tensoracle.producer import find_tool

    for tool in ("ptxas", "cuobjdump"):
        try:
            find_tool(tool)
        except ProducerToolError as error:
            return f"the producer extra is not installed: {error}"
    return None


def require_producer_tools() -> None:
    """Fails where the producer extra is absent, or skips with the reason where
    TENSORACLE_TESTS_WITHOUT_PRODUCER=1 (also at a module's top level)."""
    reason = producer_absent_reason()
    if reason is None:
        return
    if os.environ.get(WITHOUT_PRODUCER) == "1":
        pytest.skip(f"{reason} ({WITHOUT_PRODUCER}=1)", allow_module_level=True)
    pytest.fail(
        f"{reason}; make test installs it (set {WITHOUT_PRODUCER}=1 on a machine meant to run "
        "without it)",
        pytrace=False,
    )


class _NoTorch(importlib.abc.MetaPathFinder):
    """Refuses to import torch while a producer test runs (see hide_torch)."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "torch" or name.startswith("torch."):
            raise ImportError(f"{name} was imported while the producer test hid torch")


def hide_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lets compile_bundle run in this test session, which imported torch for the converter's
    tests: compile_bundle refuses a process where torch was imported (as 1.x does), so for the
    duration of one test torch's modules leave sys.modules, and an attempt to import torch
    meanwhile fails the test instead of loading it a second time. monkeypatch restores both."""
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_NoTorch(), *sys.meta_path])

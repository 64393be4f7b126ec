"""Shared helpers for the producer's tests: whether the producer extra is installed, and running
compile_bundle in a test session that imported torch."""

from __future__ import annotations

import importlib.abc
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def require_producer_tools() -> None:
    """Skips, with the reason, where the producer extra (Triton, ptxas, cuobjdump) is absent."""
    pytest.importorskip("triton", reason="the producer extra (Triton) is not installed")
    from tensoracle.errors import ProducerToolError
    from tensoracle.producer import find_tool

    for tool in ("ptxas", "cuobjdump"):
        try:
            find_tool(tool)
        except ProducerToolError as error:
            pytest.skip(f"the producer extra is not installed: {error}")


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

"""log.capture keeps each thread's TensorRT errors to that thread's captures (real RTX errors)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from backend_requirement import rtx_module

from tensoracle.engine import log
from tensoracle.engine.backends import backend


@pytest.fixture
def trt(monkeypatch: pytest.MonkeyPatch) -> Any:
    rtx_module()
    monkeypatch.setenv("TENSORACLE_BACKEND", "tensorrt_rtx")
    return backend().module


def provoke_error(trt: Any) -> None:
    """A real TensorRT-RTX API usage error: float32 IO that only allows a half-only format."""
    builder = trt.Builder(log.trt_logger(backend()))
    network = builder.create_network(0)
    x = network.add_input("x", trt.float32, (1, 3, 8, 8))
    x.allowed_formats = 1 << int(trt.TensorFormat.HWC8)
    y = network.add_identity(x).get_output(0)
    network.mark_output(y)
    assert builder.build_serialized_network(network, builder.create_builder_config()) is None


def test_a_threads_errors_stay_out_of_another_threads_capture(trt):
    inside = threading.Barrier(2)
    done = threading.Event()
    seen: dict[str, list[str]] = {}

    def quiet() -> None:
        with log.capture() as errors:
            inside.wait()
            done.wait(timeout=60)
        seen["quiet"] = list(errors)

    other = threading.Thread(target=quiet)
    other.start()
    try:
        with log.capture() as errors:
            inside.wait()
            provoke_error(trt)
    finally:
        done.set()
        other.join()
    assert any("allowed TensorFormats" in message for message in errors)
    assert seen["quiet"] == []


def test_errors_from_a_thread_without_a_capture_reach_every_capture(trt):
    # As TensorRT's own worker threads do: nobody on that thread asked for the messages.
    with log.capture() as outer, log.capture() as inner:
        worker = threading.Thread(target=provoke_error, args=(trt,))
        worker.start()
        worker.join()
    assert any("allowed TensorFormats" in message for message in outer)
    assert inner == outer


def test_nested_captures_on_one_thread_all_receive_and_close_in_any_state(trt):
    with log.capture() as outer:
        with log.capture() as empty:
            pass
        with log.capture() as inner:
            provoke_error(trt)
    assert empty == []
    assert inner
    assert outer == inner
    assert log._captures == {}

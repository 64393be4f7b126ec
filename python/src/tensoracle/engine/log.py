"""The one TensorRT logger tensoracle gives every builder, runtime and plugin registry it uses.

TensorRT keeps the first logger it is given as its process-wide logger, so tensoracle creates
exactly one per backend and forwards each message: to the caller's logger when an operation was
given one, else (errors only, as TensorRT's ``Logger(Logger.ERROR)`` that tensoracle 1.x used) to
stderr. Operations capture the error messages logged
while they run, so that a failed build or deserialization can say what the backend reported.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tensoracle.engine.backends import Backend

_lock = threading.Lock()
_loggers: dict[str, Any] = {}
_installers: dict[str, Any] = {}
# Active captures by the thread that opened them (threading.get_ident()).
_captures: dict[int, list[list[str]]] = {}
_forward_to: list[Any] = []
_ERROR_SEVERITIES = frozenset({"INTERNAL_ERROR", "ERROR"})
_PRINTED_SEVERITIES = _ERROR_SEVERITIES
_SHORT = {"INTERNAL_ERROR": "F", "ERROR": "E", "WARNING": "W", "INFO": "I", "VERBOSE": "V"}


def _receive(severity: Any, message: str) -> None:
    name = getattr(severity, "name", str(severity))
    with _lock:
        if name in _ERROR_SEVERITIES:
            # An error belongs to the captures of the thread that logged it. TensorRT's own
            # worker threads have no capture: their errors go to every active capture.
            mine = _captures.get(threading.get_ident())
            for captured in mine or [c for found in _captures.values() for c in found]:
                captured.append(message)
        target = _forward_to[-1] if _forward_to else None
    if target is not None:
        target.log(severity, message)
    elif name in _PRINTED_SEVERITIES:
        print(f"[TRT] [{_SHORT.get(name, name)}] {message}", file=sys.stderr)


def trt_logger(chosen: Backend) -> Any:
    """The backend's process-wide forwarding logger (an ``ILogger`` of that backend)."""
    with _lock:
        existing = _loggers.get(chosen.name)
        if existing is not None:
            return existing
        base = chosen.module.ILogger

        class _Forwarding(base):  # type: ignore[misc, valid-type]  # the backend's ILogger, Any
            def __init__(self) -> None:
                base.__init__(self)

            def log(self, severity: Any, msg: str) -> None:
                _receive(severity, msg)

        created = _Forwarding()
        _loggers[chosen.name] = created
        # A runtime made with the logger makes it the backend's global logger, which the global
        # plugin registry uses; kept alive for the process.
        _installers[chosen.name] = chosen.module.Runtime(created)
        return created


@contextmanager
def capture(forward_to: Any = None) -> Iterator[list[str]]:
    """Collects the error messages this thread logs inside the block (and those of threads
    without a capture of their own, such as TensorRT's workers); forwards all messages to
    ``forward_to`` (an ``ILogger``-like object with ``log(severity, msg)``) when given."""
    captured: list[str] = []
    thread = threading.get_ident()
    with _lock:
        _captures.setdefault(thread, []).append(captured)
        if forward_to is not None:
            _forward_to.append(forward_to)
    try:
        yield captured
    finally:
        with _lock:
            active = _captures[thread]
            # By identity: list.remove would take the first *equal* (say, empty) capture.
            del active[next(i for i, c in enumerate(active) if c is captured)]
            if not active:
                del _captures[thread]
            if forward_to is not None:
                _forward_to.remove(forward_to)


def describe(messages: list[str]) -> str:
    """The captured messages as one text for an exception message."""
    if not messages:
        return "the backend logged no error"
    return "; ".join(messages)

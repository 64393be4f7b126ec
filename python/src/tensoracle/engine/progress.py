"""Build progress and cancelling, through the backend's ``IProgressMonitor``.

Every build gets a monitor. TensorRT reports nested phases ("Building engine" > "Optimizing
graph" > ...) and the steps inside them; the monitor hands each event to one sink:

- a live display of the open phases on stderr (rich) when stderr is a terminal;
- one ``logging`` line (logger ``tensoracle.progress``, INFO) per finished phase otherwise;
- the caller's function, given ``progress=callable``; returning ``"stop"`` cancels the build;
- nothing, with ``progress=False`` or ``TENSORACLE_PROGRESS=off``.

``progress=None`` (the default) follows ``TENSORACLE_PROGRESS``: ``auto`` (default: display on a
terminal, log lines elsewhere), ``display``, ``log`` or ``off``. ``progress=True`` means ``auto``.

Cancelling: TensorRT can stop a build only when the monitor answers a step, and TensorRT-RTX 1.7
spends most of a large build in one phase without steps. So the build runs in a worker thread
while the calling thread waits: Ctrl-C (KeyboardInterrupt) reaches the caller at once, the monitor
answers TensorRT's next step with "stop", and the abandoned build's result is dropped. Nothing of
it is saved. The monitor never changes what is built.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from tensoracle.engine.backends import Backend
from tensoracle.errors import BuildCancelledError

ENVIRONMENT_VARIABLE = "TENSORACLE_PROGRESS"
MODES = ("auto", "display", "log", "off")
STOP = "stop"
# How long a cancelled build may take to reach TensorRT's next step before the caller gets the
# exception anyway (the worker then stops at that step, and its plan is dropped).
CANCEL_GRACE_SECONDS = 1.0

_logger = logging.getLogger("tensoracle.progress")


@dataclass(frozen=True)
class ProgressEvent:
    """One report of TensorRT's progress monitor.

    ``kind`` is ``"start"`` (a phase began; ``steps`` is its number of steps), ``"step"`` (step
    ``step`` of ``steps`` is complete, counting from 1) or ``"finish"`` (``seconds`` since its
    start). ``depth`` is 0 for the outermost phase and grows with nesting.
    """

    kind: Literal["start", "step", "finish"]
    phase: str
    parent: str | None
    depth: int
    steps: int
    step: int = 0
    seconds: float = 0.0


Progress = bool | Callable[[ProgressEvent], Any] | None
# A resolved ``Progress``: "display", "log", "off", or the caller's function.
Mode = str | Callable[[ProgressEvent], Any]


def resolve_mode(progress: Any) -> Mode:
    """``progress`` as a mode name or the caller's function; checks both it and the variable."""
    if progress is True:
        return "auto"
    if progress is False:
        return "off"
    if progress is not None:
        if not callable(progress):
            raise ValueError(
                f"progress must be True, False, None or a function of a ProgressEvent, "
                f"not {progress!r}"
            )
        function: Callable[[ProgressEvent], Any] = progress
        return function
    text = os.environ.get(ENVIRONMENT_VARIABLE, "").strip().lower() or "auto"
    if text not in MODES:
        raise ValueError(
            f"{ENVIRONMENT_VARIABLE}={os.environ[ENVIRONMENT_VARIABLE]!r} is not a progress "
            f"mode; use one of {', '.join(MODES)}"
        )
    if text == "auto":
        stream = sys.stderr
        return "display" if stream is not None and stream.isatty() else "log"
    return text


class _Display:
    """The live display: one line per open phase, indented by depth, on stderr."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(bar_width=24),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._tasks: dict[tuple[str, int], Any] = {}
        self._progress.start()

    def __call__(self, event: ProgressEvent) -> None:
        key = (event.phase, event.depth)
        if event.kind == "start":
            label = "  " * event.depth + event.phase
            self._tasks[key] = self._progress.add_task(label, total=max(event.steps, 1))
        elif event.kind == "step" and key in self._tasks:
            self._progress.update(self._tasks[key], completed=event.step)
        elif event.kind == "finish" and key in self._tasks:
            self._progress.remove_task(self._tasks.pop(key))
            if event.depth == 0:
                self._progress.console.print(
                    f"[green]✓[/] {event.phase} ({event.seconds:.1f} s)", highlight=False
                )

    def close(self) -> None:
        self._progress.stop()


def _log_line(event: ProgressEvent) -> None:
    if event.kind == "finish":
        _logger.info(
            "build phase %s%s finished in %.2f s", "  " * event.depth, event.phase, event.seconds
        )


class BuildMonitor:
    """Turns TensorRT's callbacks into ``ProgressEvent`` s and answers "stop" when cancelled."""

    def __init__(self, mode: Mode) -> None:
        self._display: _Display | None = None
        self._sink: Callable[[ProgressEvent], Any] | None
        if callable(mode):
            self._sink = mode
        elif mode == "display":
            self._display = _Display()
            self._sink = self._display
        elif mode == "log":
            self._sink = _log_line
        else:
            self._sink = None
        self._lock = threading.Lock()
        self._open: list[tuple[str, int, float]] = []  # (phase, steps, started) innermost last
        self.cancelled: str | None = None  # "stop" (the function) or "interrupt" (Ctrl-C)
        self.failure: BaseException | None = None  # raised by the caller's function

    def cancel(self, reason: str) -> None:
        with self._lock:
            if self.cancelled is None:
                self.cancelled = reason

    def _emit(self, event: ProgressEvent) -> None:
        if self._sink is None:
            return
        try:
            answer = self._sink(event)
        except BaseException as error:
            with self._lock:
                if self.failure is None:
                    self.failure = error
            self.cancel("interrupt" if isinstance(error, KeyboardInterrupt) else "failure")
            return
        if isinstance(answer, str) and answer.lower() == STOP:
            self.cancel(STOP)

    def phase_start(self, phase: str, parent: str | None, steps: int) -> None:
        with self._lock:
            depth = len(self._open)
            self._open.append((phase, steps, time.monotonic()))
        self._emit(ProgressEvent("start", phase, parent, depth, steps))

    def step_complete(self, phase: str, step: int) -> bool:
        with self._lock:
            found = [i for i, item in enumerate(self._open) if item[0] == phase]
            depth = found[-1] if found else len(self._open)
            steps = self._open[depth][1] if found else 0
            parent = self._open[depth - 1][0] if found and depth > 0 else None
        self._emit(ProgressEvent("step", phase, parent, depth, steps, step + 1))
        return self.cancelled is None

    def phase_finish(self, phase: str) -> None:
        with self._lock:
            found = [i for i, item in enumerate(self._open) if item[0] == phase]
            if not found:
                return
            depth = found[-1]
            _, steps, started = self._open[depth]
            parent = self._open[depth - 1][0] if depth > 0 else None
            del self._open[depth:]
        self._emit(
            ProgressEvent("finish", phase, parent, depth, steps, steps, time.monotonic() - started)
        )

    def close(self) -> None:
        if self._display is not None:
            self._display.close()
            self._display = None


_monitor_classes: dict[str, type] = {}


def _trt_monitor(chosen: Backend, monitor: BuildMonitor) -> Any:
    """An ``IProgressMonitor`` of the chosen backend that forwards to ``monitor``."""
    cls = _monitor_classes.get(chosen.name)
    if cls is None:
        base = chosen.module.IProgressMonitor

        class _Forwarding(base):  # type: ignore[misc, valid-type]  # backend class, Any
            def __init__(self, target: BuildMonitor) -> None:
                base.__init__(self)
                self.target = target

            def phase_start(
                self, phase_name: str, parent_phase: str | None, num_steps: int
            ) -> None:
                self.target.phase_start(phase_name, parent_phase, int(num_steps))

            def step_complete(self, phase_name: str, step: int) -> bool:
                return self.target.step_complete(phase_name, int(step))

            def phase_finish(self, phase_name: str) -> None:
                self.target.phase_finish(phase_name)

        cls = _Forwarding
        _monitor_classes[chosen.name] = cls
    return cls(monitor)


def build_serialized_network(
    chosen: Backend, builder: Any, network: Any, config: Any, mode: Mode
) -> Any:
    """``builder.build_serialized_network`` with progress reports and cancelling.

    Returns the plan (None when TensorRT failed). Raises KeyboardInterrupt on Ctrl-C,
    BuildCancelledError when the progress function returned "stop", and whatever the progress
    function raised."""
    monitor = BuildMonitor(mode)
    config.progress_monitor = _trt_monitor(chosen, monitor)
    outcome: dict[str, Any] = {}
    finished = threading.Event()

    def work() -> None:
        try:
            outcome["plan"] = builder.build_serialized_network(network, config)
        except BaseException as error:
            outcome["error"] = error
        finally:
            finished.set()

    worker = threading.Thread(target=work, name="tensoracle-build", daemon=True)
    try:
        worker.start()
        while not finished.wait(0.05):
            if monitor.cancelled == "interrupt":
                raise KeyboardInterrupt
        if monitor.cancelled == "interrupt":
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        monitor.cancel("interrupt")
        finished.wait(CANCEL_GRACE_SECONDS)
        raise
    finally:
        monitor.close()
    if "error" in outcome:
        raise outcome["error"]
    if monitor.failure is not None:
        raise monitor.failure
    if monitor.cancelled == STOP:
        raise BuildCancelledError("the build was cancelled: the progress function returned 'stop'")
    return outcome.get("plan")

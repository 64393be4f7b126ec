"""The progress of downloads on a terminal: a bar per object over a few MiB, on stderr (rich).

``cache pull`` wraps each download's receiver (``counted``) so that every chunk fed advances the
object's bar. Nothing is drawn when stderr is not a terminal, nor with ``--quiet``: what goes to
stdout (the report) never changes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import TracebackType
from typing import Any

from tensoracle.terminal_text import terminal_text

# Objects at least this large get a bar; smaller ones arrive before one would be worth drawing.
SHOWN_FROM_BYTES = 4 << 20


class Counted:
    """A receiver whose fed chunks advance a bar: feed, abort and finish are the receiver's."""

    def __init__(self, receiver: Any, progress: Any, task: Any) -> None:
        self._receiver = receiver
        self._progress = progress
        self._task = task

    @property
    def object_size(self) -> int:
        return int(self._receiver.object_size)

    def feed(self, chunk: Any) -> None:
        self._receiver.feed(chunk)
        self._progress.advance(self._task, memoryview(chunk).nbytes)

    def abort(self) -> None:
        self._receiver.abort()
        self._progress.remove_task(self._task)  # a refused object leaves no bar behind

    def finish(self) -> Any:
        return self._receiver.finish()


class TransferProgress:
    """A context manager drawing download bars on ``console`` (default: stderr, when it is a
    terminal), or nothing when ``quiet``."""

    def __init__(self, *, quiet: bool = False, console: Any = None) -> None:
        self._progress: Any = None
        if quiet:
            return
        if console is None:
            stream = sys.stderr
            if stream is None or not stream.isatty():
                return
            from rich.console import Console

            console = Console(stderr=True)
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        self._progress = Progress(
            TextColumn("{task.description}", markup=False),
            BarColumn(bar_width=24),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=console,
        )

    def __enter__(self) -> TransferProgress:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

    @property
    def tasks(self) -> list[Any]:
        """The bars drawn now (rich's ``Task``: description, completed, total)."""
        return [] if self._progress is None else list(self._progress.tasks)

    def counted(self, name: str, wrap: Callable[[Any], Any] | None = None) -> Callable[[Any], Any]:
        """A ``judge`` for ``fleet.receive``: the receiver (wrapped by ``wrap`` first, when
        given) advancing a bar named ``name`` when the object is large enough to show one."""

        def judge(receiver: Any) -> Any:
            judged = receiver if wrap is None else wrap(receiver)
            size = int(judged.object_size)
            if self._progress is None or size < SHOWN_FROM_BYTES:
                return judged
            return Counted(
                judged, self._progress, self._progress.add_task(terminal_text(name), total=size)
            )

        return judge

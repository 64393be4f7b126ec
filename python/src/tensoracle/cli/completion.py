"""A command whose exit status counts only when it says it finished: the command runs in a child
interpreter that writes its exit status to a completion file (named by ``$COMPLETION``) as its
last act, and the parent returns that status only when the file holds it and the child exited
with it. Code the command runs (a model package's recipes) can end the process early, with
``os._exit(0)`` (which skips ``finally`` blocks, ``atexit`` and any status set later) or from an
``atexit`` handler; the parent then sees no completion, or a mismatch, and reports a failure
instead of the child's misleading status.

The parent runs none of the command's code: it forwards SIGTERM and SIGHUP to the child and
ignores SIGINT while it waits (the terminal sends Ctrl-C to the child too), so the child decides
what an interruption means.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path
from types import FrameType

COMPLETION = "TENSORACLE_COMMAND_COMPLETION"
EXIT_FAILURE = 1

_FORWARDED = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


def _interpreter_options() -> list[str]:
    """The options this interpreter was started with that the child must share."""
    flags = sys.flags
    chosen = [
        option
        for option, wanted in (
            ("-I", flags.isolated),
            ("-E", flags.ignore_environment and not flags.isolated),
            ("-s", flags.no_user_site and not flags.isolated),
            ("-P", getattr(flags, "safe_path", False) and not flags.isolated),
            ("-B", flags.dont_write_bytecode),
        )
        if wanted
    ]
    chosen += ["-O"] * flags.optimize
    chosen += [f"-W{option}" for option in sys.warnoptions]
    chosen += [
        f"-X{name}" if value is True else f"-X{name}={value}"
        for name, value in sys._xoptions.items()
    ]
    return chosen


def finish(status: int, completion: str) -> int:
    """The child's last act: flushes its output and records ``status`` as the command's."""
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):
            stream.flush()
    Path(completion).write_text(f"{status}\n", encoding="ascii")
    return status


def _verdict(command: str, returncode: int, recorded: str) -> tuple[int, str | None]:
    """The exit status to return, and why the child's own status was not trusted (or None)."""
    if returncode < 0:
        return 128 - returncode, f"{command} was ended by signal {-returncode}"
    if not recorded.strip():
        return (
            EXIT_FAILURE,
            f"{command} ended with exit status {returncode} before it finished (code it ran "
            "ended the process, for example with os._exit); nothing it reported counts",
        )
    try:
        status = int(recorded)
    except ValueError:
        return EXIT_FAILURE, f"{command} recorded {recorded.strip()!r}, not an exit status"
    if status != returncode:  # the recorded failure, else the exit's; never 0
        return (
            status or returncode or EXIT_FAILURE,
            f"{command} finished with exit status {status} but the process then exited with "
            f"status {returncode} (code it ran changed it while the interpreter shut down)",
        )
    return status, None


def run_to_completion(
    words: Sequence[str], args: Sequence[str], prog: str, body: Callable[[], int]
) -> int:
    """Runs ``body`` when this process is the child (``$COMPLETION`` set); otherwise runs
    ``python -m tensoracle.cli WORDS ARGS`` as a child and returns its status when it finished,
    else EXIT_FAILURE (128 + N when a signal N ended it), saying why on stderr."""
    completion = os.environ.pop(COMPLETION, None)
    if completion is not None:
        return finish(body(), completion)
    descriptor, name = tempfile.mkstemp(prefix="tensoracle-completion-", suffix=".status")
    os.close(descriptor)
    command = [sys.executable, *_interpreter_options(), "-m", "tensoracle.cli", *words, *args]
    try:
        child = subprocess.Popen(command, env={**os.environ, COMPLETION: name})

        def forward(signum: int, _frame: FrameType | None) -> None:
            with suppress(OSError):
                child.send_signal(signum)

        previous = {signum: signal.signal(signum, forward) for signum in _FORWARDED}
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            returncode = child.wait()
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        recorded = Path(name).read_text(encoding="ascii", errors="replace")
    finally:
        with suppress(OSError):
            os.unlink(name)
    status, problem = _verdict(f"{prog} {' '.join(args)}".rstrip(), returncode, recorded)
    if problem is not None:
        print(f"{prog}: {problem}", file=sys.stderr, flush=True)
    return status

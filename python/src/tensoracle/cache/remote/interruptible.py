"""Ctrl-C during a blocking call into the store client.

obstore runs each request in Rust and blocks the calling thread there until the request ends or
times out (120 s by default). Python runs its signal handlers only in the main thread and only
between bytecodes, so a Ctrl-C that arrives meanwhile waits for the request: a stalled download
could not be interrupted. :func:`interruptible` makes the call on a daemon thread and waits for
it in small steps on the calling thread, where ``KeyboardInterrupt`` is then raised at once. The
interrupted call is left to end (or time out) on its own; its result is dropped, and nothing
waits for it, not even the interpreter's exit.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

_T = TypeVar("_T")

# How often the waiting thread wakes to let Python run a pending signal handler (Windows cannot
# interrupt a lock wait, POSIX can; waking in steps works on both).
_STEP_SECONDS = 0.05


def interruptible(call: Callable[[], _T]) -> _T:
    """``call()``, returning its result or raising its exception; from the main thread, made on
    a daemon thread so that Ctrl-C (``KeyboardInterrupt``) ends the wait at once. From any other
    thread (signals reach only the main one) it is called directly."""
    if threading.current_thread() is not threading.main_thread():
        return call()
    done = threading.Event()
    outcome: list[_T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as error:  # handed to the waiting thread as it is
            failure.append(error)
        finally:
            done.set()

    threading.Thread(target=run, name="tensoracle-remote-request", daemon=True).start()
    while not done.wait(_STEP_SECONDS):
        pass
    if failure:
        raise failure[0]
    return outcome[0]

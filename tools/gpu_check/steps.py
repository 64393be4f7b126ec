"""One step of the check: a command run with a time limit, its outcome and its test cases."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

PASS = "pass"
FAIL = "fail"
SKIP = "skip"


@dataclass
class CaseResult:
    """One test inside a step (a pytest test or a CTest test)."""

    name: str
    status: str
    reason: str = ""


@dataclass
class StepResult:
    """What one step did: its status, why, how long it took and the end of its output."""

    title: str
    status: str
    reason: str = ""
    command: str = ""
    seconds: float = 0.0
    output_tail: str = ""
    cases: list[CaseResult] = field(default_factory=list)
    show_output: bool = (
        False  # the end of the output belongs in the report even on success
    )

    def counts(self) -> dict[str, int]:
        """The number of test cases per status."""
        totals = {PASS: 0, FAIL: 0, SKIP: 0}
        for case in self.cases:
            totals[case.status] = totals.get(case.status, 0) + 1
        return totals


@dataclass
class Completed:
    """A finished command: exit code (None when it was stopped at its limit) and its output."""

    returncode: int | None
    output: str
    seconds: float


def tail(text: str, lines: int = 25) -> str:
    """The last `lines` lines of `text`."""
    return "\n".join(text.rstrip().splitlines()[-lines:])


def run_command(
    command: list[str],
    *,
    timeout: float,
    log: Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> Completed:
    """Runs `command`, writing its output to `log`; stops its whole process group at `timeout`.

    A command that cannot be started counts as exit code 127, with the reason as its output.
    """
    started = time.monotonic()
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w", encoding="utf-8", errors="replace") as sink:
        sink.write("$ " + " ".join(command) + "\n")
        sink.flush()
        try:
            process = subprocess.Popen(
                command,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as error:
            sink.write(f"cannot start: {error}\n")
            return Completed(127, f"cannot start {command[0]}: {error}", 0.0)
        try:
            returncode: int | None = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            returncode = None
            sink.write(f"\n(stopped after the step's limit of {timeout:g} s)\n")
    output = log.read_text(encoding="utf-8", errors="replace")
    return Completed(returncode, output, time.monotonic() - started)


def command_step(
    title: str,
    command: list[str],
    *,
    timeout: float,
    log: Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> StepResult:
    """Runs a command as a step: exit 0 passes, anything else (or the time limit) fails."""
    done = run_command(command, timeout=timeout, log=log, cwd=cwd, env=env)
    if done.returncode is None:
        status, reason = FAIL, f"stopped after its limit of {timeout:g} s"
    elif done.returncode == 0:
        status, reason = PASS, ""
    else:
        status, reason = FAIL, f"exit code {done.returncode}"
    return StepResult(
        title=title,
        status=status,
        reason=reason,
        command=" ".join(command),
        seconds=done.seconds,
        output_tail=tail(done.output),
    )

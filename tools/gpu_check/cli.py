"""`tools/gpu-check`: runs tensoracle's GPU tests, documentation examples and GPU benchmarks on this
machine and writes one Markdown report of the machine and every result.

Exit status: 0 when no step failed, 1 when a step failed, 2 for a usage error, 3 when no usable GPU
was found (the report then says why, and nothing else ran).
"""

from __future__ import annotations

import argparse
import datetime
import subprocess
import sys
from pathlib import Path

from gpu_check import environment
from gpu_check.check import REPOSITORY, Check
from gpu_check.machine import describe
from gpu_check.report import Software, render
from gpu_check.steps import FAIL, SKIP, StepResult

PARTS = ("pytest", "docs", "cpp", "bench")


class UsageError(Exception):
    """A bad argument: the message names the option and the value."""


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be above 0, got {text!r}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpu-check",
        description=(
            "Runs tensoracle's GPU tests (pytest -m gpu, ctest -L gpu), the documentation "
            "examples and the GPU benchmarks, and writes one Markdown report."
        ),
    )
    parser.add_argument(
        "--wheelhouse",
        type=Path,
        help="install tensoracle and every other wheel in DIR with no package index (offline)",
    )
    parser.add_argument(
        "--use-current-env",
        action="store_true",
        help="run in the Python running this command, where tensoracle is already installed",
    )
    parser.add_argument(
        "--report",
        type=Path,
        default=Path("gpu-check-report.md"),
        help="the report to write",
    )
    parser.add_argument(
        "--work-dir",
        type=Path,
        default=REPOSITORY / "build" / "gpu-check",
        help="environment, C++ build, logs (default build/gpu-check)",
    )
    parser.add_argument(
        "--cpp-build",
        type=Path,
        help="an already built CMake build of cpp/ to run ctest in",
    )
    parser.add_argument(
        "--cubin-bundle",
        type=Path,
        help="a bundle built by examples/cubin_kernels/build.py, for the cubin runtime test",
    )
    parser.add_argument(
        "--only",
        default=",".join(PARTS),
        help=f"comma-separated parts to run, from {', '.join(PARTS)} (default: all)",
    )
    parser.add_argument(
        "--timeout",
        type=_positive,
        default=900.0,
        help="seconds allowed to each step (900)",
    )
    parser.add_argument(
        "--test-timeout",
        type=_positive,
        default=300.0,
        help="seconds allowed to one pytest test, where pytest-timeout is installed (300)",
    )
    parser.add_argument(
        "--run-without-gpu",
        action="store_true",
        help="run the steps even where no GPU is usable (GPU tests then skip); checks the check",
    )
    return parser


def _validate(args: argparse.Namespace) -> list[str]:
    parts = [part.strip() for part in args.only.split(",") if part.strip()]
    unknown = [part for part in parts if part not in PARTS]
    if unknown or not parts:
        raise UsageError(f"--only {args.only!r}: choose from {', '.join(PARTS)}")
    if args.wheelhouse is not None:
        if args.use_current_env:
            raise UsageError("--wheelhouse and --use-current-env exclude each other")
        if not args.wheelhouse.is_dir():
            raise UsageError(
                f"--wheelhouse {str(args.wheelhouse)!r}: no such directory"
            )
        if not any(args.wheelhouse.glob("tensoracle-*.whl")):
            raise UsageError(
                f"--wheelhouse {str(args.wheelhouse)!r}: holds no tensoracle-*.whl wheel"
            )
    if (
        args.cpp_build is not None
        and not (args.cpp_build / "CTestTestfile.cmake").is_file()
    ):
        raise UsageError(
            f"--cpp-build {str(args.cpp_build)!r}: not a configured CMake build "
            "(no CTestTestfile.cmake); build one with `make cpp`"
        )
    if (
        args.cubin_bundle is not None
        and not (args.cubin_bundle / "bundle.json").is_file()
    ):
        raise UsageError(
            f"--cubin-bundle {str(args.cubin_bundle)!r}: no bundle.json there"
        )
    return parts


def _source() -> str:
    def git(*arguments: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(REPOSITORY), *arguments],
                capture_output=True,
                text=True,
                check=False,
                timeout=30,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    top = git("rev-parse", "--show-toplevel")
    if top is None or Path(top).resolve() != REPOSITORY:
        return "not a git checkout"
    return f"commit {git('describe', '--always', '--dirty')}"


def _labels(check: Check) -> dict[str, str]:
    """The folders of this machine that the report shows by a short name."""
    labels = {str(REPOSITORY): "<checkout>", str(check.work): "<work-dir>"}
    if check.args.wheelhouse is not None:
        labels[str(check.args.wheelhouse.resolve())] = "<wheelhouse>"
    return labels


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        parts = _validate(args)
    except UsageError as error:
        parser.print_usage(sys.stderr)
        print(f"gpu-check: error: {error}", file=sys.stderr)
        return 2
    machine = describe()
    check = Check(args, parts, machine)
    generated = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    source = _source()
    if machine.gpu_absent is not None and not args.run_without_gpu:
        software = environment.software(check.python)
        steps = [
            StepResult(
                ", ".join(parts), SKIP, f"not run: no usable GPU ({machine.gpu_absent})"
            )
        ]
        _write(
            args.report,
            render(
                machine,
                software,
                steps,
                generated=generated,
                source=source,
                labels=_labels(check),
            ),
        )
        print(f"gpu-check: no usable GPU ({machine.gpu_absent}); report: {args.report}")
        return 3
    check.work.mkdir(parents=True, exist_ok=True)
    software = Software()
    if check.prepare_environment():
        software = environment.software(check.python)
        check.python_tests()
        check.cpp_tests()
        check.benchmarks(software)
    _write(
        args.report,
        render(
            machine,
            software,
            check.steps,
            generated=generated,
            source=source,
            labels=_labels(check),
        ),
    )
    for step in check.steps:
        print(
            f"{step.status:4}  {step.title}"
            + (f": {step.reason}" if step.reason else "")
        )
    print(f"gpu-check: report written to {args.report}")
    return 1 if any(step.status == FAIL for step in check.steps) else 0

"""What every benchmark script in bench/ shares: quick mode and the tests' helpers.

Importing this package puts python/tests/support (the test suite's helpers, such as
engine_files and s3_server) on ``sys.path``, so a script imports them as top-level modules
after ``import harness``, the same way the tests do. This is the only place that knows where
they live.

``interleaved_best`` times several runs round by round, keeping each one's best, so that a
baseline and what is measured against it see the same machine state.

``parse`` adds ``--quick`` to a script's options: small sizes and one repeat, which runs the
whole code path of the benchmark and prints its ratio line in seconds, so that ``bench/run.py
--quick`` checks every benchmark still works. Quick figures are not measurements.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEST_HELPERS = ROOT / "python" / "tests" / "support"

if str(TEST_HELPERS) not in sys.path:
    sys.path.insert(0, str(TEST_HELPERS))

QUICK_HELP = (
    "quick mode: small sizes and one repeat, to check that the benchmark runs end to end; "
    "the figures it prints are not measurements. Options given explicitly still win. "
    "Sets: {}"
)


def parse(
    parser: argparse.ArgumentParser,
    quick: dict[str, object],
    argv: Sequence[str] | None = None,
) -> argparse.Namespace:
    """Parses the command line with ``--quick`` added; with it, ``quick`` (destination name to
    value) replaces the defaults of those options, so explicit options still take precedence."""
    unknown = sorted(set(quick) - {action.dest for action in parser._actions})
    if unknown:
        raise ValueError(
            f"quick mode sets options the parser lacks: {', '.join(unknown)}"
        )
    settings = ", ".join(f"{name}={value!r}" for name, value in quick.items())
    parser.add_argument(
        "--quick", action="store_true", help=QUICK_HELP.format(settings)
    )
    known, _ = parser.parse_known_args(argv)
    if known.quick:
        parser.set_defaults(**quick)
    return parser.parse_args(argv)


def interleaved_best(
    repeats: int, runs: dict[str, Callable[[], object]]
) -> dict[str, float]:
    """The best time in seconds of each run over ``repeats`` rounds, the runs interleaved."""
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)
    return best

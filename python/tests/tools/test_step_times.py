"""tools/step_times.awk, the table that closes `make test`: each step's time against its budget and
the total, from a step log written here; a step or a run over its budget fails it, named."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[3]
SCRIPT = REPOSITORY / "tools" / "step_times.awk"


def table(tmp_path: Path, log: str, budgets: str, total: int = 30, factor: int = 1):
    assert shutil.which("awk") is not None
    path = tmp_path / "test-steps.log"
    path.write_text(log)
    return subprocess.run(
        [
            "awk",
            "-v",
            f"factor={factor}",
            "-v",
            f"total_budget={total}",
            "-v",
            f"budgets={budgets}",
            "-f",
            str(SCRIPT),
            str(path),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


LOG = "started 1000\nsetup 1090\ncpp-test 1390\nfuzz 1450\n"


def test_steps_within_budget_print_their_times_and_the_total(tmp_path):
    done = table(tmp_path, LOG, "setup=15 cpp-test=7 fuzz=5")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "  setup                   1:30   budget 15:00",
        "  cpp-test                5:00   budget  7:00",
        "  fuzz                    1:00   budget  5:00",
        "  make test               7:30   budget 30:00",
    ]
    assert done.stderr == ""


def test_a_step_over_its_budget_fails_the_run_naming_it(tmp_path):
    done = table(tmp_path, LOG, "setup=15 cpp-test=4 fuzz=5")
    assert done.returncode == 1
    assert "  cpp-test                5:00   budget  4:00   OVER" in done.stdout
    assert done.stderr.splitlines()[0] == (
        "make test: step cpp-test took 5:00, over its budget of 4:00 "
        "(STEP_BUDGET_cpp-test in the Makefile)"
    )


def test_the_whole_run_has_a_budget_of_its_own(tmp_path):
    done = table(tmp_path, LOG, "setup=15 cpp-test=7 fuzz=5", total=7)
    assert done.returncode == 1
    assert "the run took 7:30, over its budget of 7:00 (TEST_BUDGET" in done.stderr


@pytest.mark.parametrize(("factor", "status"), [(1, 1), (2, 0)])
def test_the_factor_scales_every_budget(tmp_path, factor, status):
    done = table(tmp_path, LOG, "setup=15 cpp-test=3 fuzz=5", total=5, factor=factor)
    assert done.returncode == status, done.stdout + done.stderr


def test_the_makefile_gives_every_step_of_make_test_a_budget():
    makefile = (REPOSITORY / "Makefile").read_text()
    steps_line = makefile.split("TEST_STEPS := ", 1)[1].split("\nSTEP_LOG", 1)[0]
    steps = steps_line.replace("\\\n", " ").split()
    assert "cpp-test" in steps
    for step in steps:
        assert f"\nSTEP_BUDGET_{step} := " in makefile, step
